// The settings table and its decoder: one rule for a flag's text and a TOML value, every
// default decodable, every flag and key unique.
#include "run/settings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "run/load.h"
#include "run/usage.h"

namespace nfpark::run {
namespace {

TEST(Settings, EveryDefaultDecodesAndEveryNameIsUnique) {
  std::set<std::string> keys, flags;
  for (const Setting& s : settings()) {
    EXPECT_TRUE(keys.insert(s.name()).second) << s.name();
    if (!s.flag.empty()) {
      EXPECT_TRUE(flags.insert(std::string(s.flag)).second) << s.flag;
    }
    EXPECT_FALSE(s.help.empty()) << s.name();
    ASSERT_NE(s.apply, nullptr) << s.name();
    if (s.def.empty()) continue;
    Value v;
    std::string why;
    EXPECT_TRUE(decode_text(s, s.def, v, why)) << s.name() << ": " << why;
  }
}

TEST(Settings, TableDefaultsMatchTheStructsTheEngineUses) {
  const Loader l;
  const RunConfig& c = l.config();
  const park::ParkConfig park;
  const park::QueueMemConfig qm;
  const park::SlicerConfig sl;
  EXPECT_EQ(c.park.slots, park.slots);
  EXPECT_EQ(c.park.min_payload, park.min_payload);
  EXPECT_EQ(c.park.park_bytes, park.park_bytes);
  EXPECT_EQ(c.park.max_exp, park.max_exp);
  EXPECT_EQ(c.queuemem.queues, qm.queues);
  EXPECT_EQ(c.queuemem.slices, qm.slices);
  EXPECT_EQ(c.queuemem.batch, qm.batch);
  EXPECT_EQ(c.queuemem.header_array, qm.header_array);
  EXPECT_EQ(c.queuemem.min_payload, qm.min_payload);
  EXPECT_EQ(c.slicer.thr, sl.thr);
  EXPECT_EQ(c.slicer.entries, sl.entries);
  EXPECT_EQ(c.slicer.ttl, sl.ttl);
  EXPECT_EQ(c.timeout_s, 600);
  EXPECT_TRUE(c.notify_drops);
  EXPECT_TRUE(c.progress);
}

Given toml_int(int64_t i) {
  Given g;
  g.i = i;
  g.shown = std::to_string(i);
  return g;
}
Given toml_real(double d, std::string shown) {
  Given g;
  g.d = d;
  g.shown = std::move(shown);
  return g;
}

TEST(Settings, TextAndTomlFailWithTheSameMessage) {
  const Setting* s = find_flag("max-exp");
  ASSERT_NE(s, nullptr);
  Value v;
  std::string a, b;
  EXPECT_FALSE(decode_text(*s, "0", v, a));
  EXPECT_FALSE(decode_given(*s, toml_int(0), v, b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, "expected an integer from 1 to 255 (traversals), got 0");
}

TEST(Settings, RealsRejectNanInfinityAndNegativesBothWays) {
  const Setting* s = find_setting("faults", "delay_us");
  ASSERT_NE(s, nullptr);
  Value v;
  std::string why;
  for (const char* t : {"nan", "inf", "-5", "1e300", "", "5us"})
    EXPECT_FALSE(decode_text(*s, t, v, why)) << t;
  EXPECT_FALSE(decode_given(*s, toml_real(NAN, "nan"), v, why));
  EXPECT_FALSE(decode_given(*s, toml_real(-5, "-5.0"), v, why));
  EXPECT_FALSE(decode_given(*s, toml_int(-5), v, why));
  EXPECT_TRUE(decode_given(*s, toml_int(300), v, why));
  EXPECT_EQ(v.d, 300);
  EXPECT_TRUE(decode_text(*s, "2.5", v, why));
  EXPECT_EQ(v.d, 2.5);
}

TEST(Settings, ParkBytesIsAllOrAPositiveCount) {
  const Setting* s = find_flag("park-bytes");
  Value v;
  std::string why;
  EXPECT_TRUE(decode_text(*s, "all", v, why));
  EXPECT_EQ(v.u, 0u);
  EXPECT_TRUE(decode_text(*s, "352", v, why));
  EXPECT_EQ(v.u, 352u);
  EXPECT_FALSE(decode_text(*s, "0", v, why));
  EXPECT_FALSE(decode_given(*s, toml_int(0), v, why));
  Given all;
  all.s = "all";
  EXPECT_TRUE(decode_given(*s, all, v, why));
}

TEST(Settings, IntegersAreStrictDecimal) {
  const Setting* s = find_flag("slots");
  Value v;
  std::string why;
  for (const char* t : {"-1", "+5", "1e3", "0x10", " 5", "99999999999999999999999"})
    EXPECT_FALSE(decode_text(*s, t, v, why)) << t;
  EXPECT_FALSE(decode_given(*s, toml_real(1000, "1000.0"), v, why));
  const Setting* seed = find_flag("seed");
  EXPECT_TRUE(decode_text(*seed, "18446744073709551615", v, why)) << why;
  EXPECT_EQ(v.u, UINT64_MAX);
}

TEST(Settings, PortsListsAndPrefixes) {
  Value v;
  std::string why;
  const Setting* t = find_flag("traffic");
  EXPECT_TRUE(decode_text(*t, "vdev:a,x=1+vdev:b", v, why));
  EXPECT_EQ(v.list, (std::vector<std::string>{"vdev:a,x=1", "vdev:b"}));
  EXPECT_FALSE(decode_text(*t, "vdev:a", v, why));
  EXPECT_FALSE(decode_text(*t, "a+b+c", v, why));
  const Setting* p = find_flag("no-split-ports");
  EXPECT_TRUE(decode_text(*p, "53,123", v, why));
  EXPECT_EQ(v.ints, (std::vector<uint64_t>{53, 123}));
  EXPECT_FALSE(decode_text(*p, "53,65536", v, why));
  const Setting* x = find_flag("no-split-prefixes");
  EXPECT_TRUE(decode_text(*x, "192.0.2.0/24,2001:db8::/32", v, why)) << why;
  EXPECT_FALSE(decode_text(*x, "192.0.2.0/33", v, why));
}

TEST(Usage, MarkdownHasOneRowPerSetting) {
  const std::string md = settings_markdown();
  size_t rows = 0;
  for (size_t at = md.find("\n| `["); at != std::string::npos; at = md.find("\n| `[", at + 1))
    ++rows;
  EXPECT_EQ(rows, settings().size());
  for (const Setting& s : settings()) {
    EXPECT_NE(md.find("`[" + std::string(s.section) + "] " + std::string(s.key) + "`"),
              std::string::npos)
        << s.name();
    EXPECT_NE(flag_help(s).find(std::string(s.help)), std::string::npos);
  }
}

}  // namespace
}  // namespace nfpark::run
