// A microsecond pcap record whose fraction is >= 10^6 is not a time: the reader refuses it,
// naming the file and the packet, instead of reading it as a later second (issue 14).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "trace/pcap_reader.h"

namespace nfpark::trace {
namespace {

void put32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}

// A little-endian microsecond pcap of 60-byte frames with the given fractions.
std::string write_pcap(const std::string& name, uint32_t magic,
                       const std::vector<uint32_t>& fracs) {
  std::vector<uint8_t> b;
  put32(b, magic);
  b.insert(b.end(), {2, 0, 4, 0});  // version 2.4
  put32(b, 0);
  put32(b, 0);
  put32(b, 65535);
  put32(b, 1);  // Ethernet
  for (uint32_t f : fracs) {
    put32(b, 1700000000);
    put32(b, f);
    put32(b, 60);
    put32(b, 60);
    b.insert(b.end(), 60, 0xab);
  }
  const std::string path = ::testing::TempDir() + "nfpark_usec_" + std::to_string(getpid()) + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  return path;
}

TEST(PcapMicros, FractionOfAMillionOrMoreIsAnErrorNamingFileAndPacket) {
  const std::string f = write_pcap("bad.pcap", 0xA1B2C3D4, {0, 999999, 1000000});
  TraceReader r;
  ASSERT_TRUE(r.open(f)) << r.error();
  PacketRecord rec;
  ASSERT_EQ(r.next(rec), ReadStatus::kPacket);
  ASSERT_EQ(r.next(rec), ReadStatus::kPacket);
  EXPECT_EQ(rec.ts, 1700000000LL * kSecond + 999999000);
  EXPECT_EQ(r.next(rec), ReadStatus::kError);
  EXPECT_NE(r.error().find(f), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("packet 3"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("1000000"), std::string::npos) << r.error();
  std::remove(f.c_str());
}

TEST(PcapMicros, NanosecondFilesAllowUpToABillion) {
  const std::string f = write_pcap("nano.pcap", 0xA1B23C4D, {999999999, 1000000000});
  TraceReader r;
  ASSERT_TRUE(r.open(f)) << r.error();
  PacketRecord rec;
  ASSERT_EQ(r.next(rec), ReadStatus::kPacket);
  EXPECT_EQ(rec.ts, 1700000000LL * kSecond + 999999999);
  EXPECT_EQ(r.next(rec), ReadStatus::kError);
  EXPECT_NE(r.error().find("packet 2"), std::string::npos) << r.error();
  std::remove(f.c_str());
}

}  // namespace
}  // namespace nfpark::trace
