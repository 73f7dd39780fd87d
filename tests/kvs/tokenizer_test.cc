// memcached's tokenizer and number parsers, quirks included (kvs/tokenizer.h).
#include "kvs/tokenizer.h"

#include <gtest/gtest.h>

#include <string>

namespace nfpark::kvs {
namespace {

std::vector<std::string> tokens(std::string s, size_t max = kMaxTokens, bool* rest = nullptr) {
  Token t[kMaxTokens];
  const size_t n = tokenize_command(s.data(), t, max);
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < n; ++i) out.emplace_back(t[i].value, t[i].length);
  EXPECT_EQ(t[n - 1].length, 0u);
  if (rest) *rest = t[n - 1].value != nullptr;
  return out;
}

TEST(Tokenizer, SpacesOnlySeparate) {
  using S = std::vector<std::string>;
  EXPECT_EQ(tokens("get a b"), (S{"get", "a", "b"}));
  EXPECT_EQ(tokens("  get   a  "), (S{"get", "a"}));
  EXPECT_EQ(tokens("get\ta\r"), (S{"get\ta\r"}));
  EXPECT_EQ(tokens(""), S{});
  EXPECT_EQ(tokens(std::string("get a\0b", 7)), (S{"get", "a"}));  // cut at NUL
}

TEST(Tokenizer, AtMostMaxMinusOneTokensThenTheRest) {
  std::string line = "get";
  for (int i = 0; i < 30; ++i) line += " k" + std::to_string(i);
  bool rest = false;
  auto t = tokens(line, kMaxTokens, &rest);
  EXPECT_EQ(t.size(), kMaxTokens - 1);
  EXPECT_TRUE(rest);
  EXPECT_EQ(t.back(), "k21");
  tokens("get a b", kMaxTokens, &rest);
  EXPECT_FALSE(rest);
}

TEST(Tokenizer, NumbersParseAsMemcached) {
  uint32_t u = 7;
  int32_t i = 7;
  uint64_t ull = 7;
  EXPECT_TRUE(safe_strtoul("42", &u));
  EXPECT_EQ(u, 42u);
  EXPECT_TRUE(safe_strtoul("4294967296", &u));
  EXPECT_EQ(u, 0u);  // truncated to 32 bits
  EXPECT_FALSE(safe_strtoul("-1", &u));
  EXPECT_FALSE(safe_strtoul("12x", &u));
  EXPECT_FALSE(safe_strtoul("", &u));
  EXPECT_TRUE(safe_strtoul("+5", &u));
  EXPECT_TRUE(safe_strtoul("5\t", &u));
  EXPECT_EQ(u, 5u);
  EXPECT_TRUE(safe_strtol("-1", &i));
  EXPECT_EQ(i, -1);
  EXPECT_TRUE(safe_strtol("4294967299", &i));
  EXPECT_EQ(i, 3);
  EXPECT_FALSE(safe_strtol("99999999999999999999", &i));  // ERANGE
  EXPECT_TRUE(safe_strtoull("18446744073709551615", &ull));
  EXPECT_EQ(ull, UINT64_MAX);
  EXPECT_FALSE(safe_strtoull("-3", &ull));
}

}  // namespace
}  // namespace nfpark::kvs
