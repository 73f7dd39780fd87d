#include "kvs/tokenizer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nfpark::kvs {

namespace {
bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}
// memcached accepts a number that ends the string or is followed by whitespace.
bool ends_ok(const char* str, const char* end) {
  return is_space(*end) || (*end == '\0' && end != str);
}
}  // namespace

size_t tokenize_command(char* command, Token* tokens, size_t max_tokens) {
  size_t ntokens = 0;
  const size_t len = std::strlen(command);
  char* s = command;
  char* e = command;
  for (size_t i = 0; i < len; ++i) {
    if (*e == ' ') {
      if (s != e) {
        tokens[ntokens].value = s;
        tokens[ntokens].length = size_t(e - s);
        ++ntokens;
        *e = '\0';
        if (ntokens == max_tokens - 1) {
          ++e;
          s = e;  // so no extra token is added below
          break;
        }
      }
      s = e + 1;
    }
    ++e;
  }
  if (s != e) {
    tokens[ntokens].value = s;
    tokens[ntokens].length = size_t(e - s);
    ++ntokens;
  }
  // The terminal token: null when the whole string was scanned, else the first unscanned byte.
  tokens[ntokens].value = *e == '\0' ? nullptr : e;
  tokens[ntokens].length = 0;
  return ntokens + 1;
}

bool safe_strtoul(const char* str, uint32_t* out) {
  *out = 0;
  errno = 0;
  char* end = nullptr;
  unsigned long l = std::strtoul(str, &end, 10);
  if (errno == ERANGE || str == end) return false;
  if (!ends_ok(str, end)) return false;
  if (static_cast<long>(l) < 0 && std::strchr(str, '-') != nullptr) return false;
  *out = static_cast<uint32_t>(l);  // memcached truncates, e.g. 4294967296 -> 0
  return true;
}

bool safe_strtol(const char* str, int32_t* out) {
  *out = 0;
  errno = 0;
  char* end = nullptr;
  long l = std::strtol(str, &end, 10);
  if (errno == ERANGE || str == end) return false;
  if (!ends_ok(str, end)) return false;
  *out = static_cast<int32_t>(l);  // truncated as in memcached: 4294967299 -> 3
  return true;
}

bool safe_strtoull(const char* str, uint64_t* out) {
  *out = 0;
  errno = 0;
  char* end = nullptr;
  unsigned long long ull = std::strtoull(str, &end, 10);
  if (errno == ERANGE || str == end) return false;
  if (!ends_ok(str, end)) return false;
  if (static_cast<long long>(ull) < 0 && std::strchr(str, '-') != nullptr) return false;
  *out = ull;
  return true;
}

}  // namespace nfpark::kvs
