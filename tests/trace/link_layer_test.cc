// Captures of other link types (SLL, SLL2, BSD loopback, raw IP) read as Ethernet frames, and
// link types nfpark cannot read refused with an error naming the file, the type and the fix.
#include "trace/link_layer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/pcap_reader.h"

namespace nfpark::trace {
namespace {

std::string tmp(const std::string& name) {
  return ::testing::TempDir() + "nfpark_ll_" + std::to_string(getpid()) + "_" + name;
}

// A classic little-endian microsecond pcap of `link` holding `recs` (captured bytes, orig_len).
void write_pcap(const std::string& path, uint32_t link,
                const std::vector<std::pair<std::vector<uint8_t>, uint32_t>>& recs) {
  std::ofstream f(path, std::ios::binary);
  auto u32 = [&](uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
  u32(0xa1b2c3d4);
  u16(2);
  u16(4);
  u32(0);
  u32(0);
  u32(262144);
  u32(link);
  uint32_t t = 1;
  for (auto& [b, orig] : recs) {
    u32(t++);
    u32(0);
    u32(uint32_t(b.size()));
    u32(orig);
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  }
}

// The IP packet of a UDP frame: what a raw-IP capture holds.
std::vector<uint8_t> ip_of(std::vector<uint8_t> frame) {
  return std::vector<uint8_t>(frame.begin() + 14, frame.end());
}

std::vector<uint8_t> udp4(uint32_t payload = 100) {
  return PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1000, 53).payload_size(payload).build();
}
std::vector<uint8_t> udp6() {
  return PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1000, 53).payload_size(80).build();
}

std::vector<uint8_t> concat(std::vector<uint8_t> head, const std::vector<uint8_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

std::vector<uint8_t> sll(uint16_t proto, const std::vector<uint8_t>& l3) {
  std::vector<uint8_t> h(16, 0);
  store_be16(h.data() + 0, 0);  // to us
  store_be16(h.data() + 2, 1);  // ARPHRD_ETHER
  store_be16(h.data() + 4, 6);
  const uint8_t mac[6] = {0x52, 0x54, 0, 0x12, 0x34, 0x56};
  std::memcpy(h.data() + 6, mac, 6);
  store_be16(h.data() + 14, proto);
  return concat(h, l3);
}

std::vector<uint8_t> sll2(uint16_t proto, const std::vector<uint8_t>& l3) {
  std::vector<uint8_t> h(20, 0);
  store_be16(h.data(), proto);
  store_be32(h.data() + 4, 3);  // interface index
  store_be16(h.data() + 8, 1);  // ARPHRD_ETHER
  h[10] = 4;                    // outgoing
  h[11] = 6;
  const uint8_t mac[6] = {0x52, 0x54, 0, 0xab, 0xcd, 0xef};
  std::memcpy(h.data() + 12, mac, 6);
  return concat(h, l3);
}

std::vector<uint8_t> loop_hdr(uint32_t af, bool big_endian) {
  std::vector<uint8_t> h(4);
  if (big_endian)
    store_be32(h.data(), af);
  else
    std::memcpy(h.data(), &af, 4);
  return h;
}

struct Read {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint32_t> wire;
  std::string error;
};

Read read_all(const std::string& path) {
  Read r;
  TraceReader rd;
  if (!rd.open(path)) return r.error = rd.error(), r;
  PacketRecord rec;
  ReadStatus st;
  while ((st = rd.next(rec)) == ReadStatus::kPacket) {
    r.frames.emplace_back(rec.data, rec.data + rec.len);
    r.wire.push_back(rec.wire_len);
  }
  if (st == ReadStatus::kError) r.error = rd.error();
  return r;
}

TEST(LinkLayer, SllAndSll2BecomeEthernetWithTheCapturedSourceMac) {
  const auto frame = udp4();
  const auto l3 = ip_of(frame);
  for (uint32_t link : {linktype::kSll, linktype::kSll2}) {
    const std::string f = tmp("sll.pcap");
    const auto rec = link == linktype::kSll ? sll(0x0800, l3) : sll2(0x0800, l3);
    // The second record was cut by the snaplen: its wire length is 40 bytes longer.
    write_pcap(f, link, {{rec, uint32_t(rec.size())}, {rec, uint32_t(rec.size() + 40)}});
    Read r = read_all(f);
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.frames.size(), 2u);
    const auto& e = r.frames[0];
    ASSERT_EQ(e.size(), frame.size());
    EXPECT_EQ(r.wire[0], frame.size());
    EXPECT_EQ(r.wire[1], frame.size() + 40);
    EXPECT_EQ(0, std::memcmp(e.data() + 14, l3.data(), l3.size()));  // L3 untouched
    EXPECT_EQ(load_be16(e.data() + 12), 0x0800);
    const uint8_t dst[6] = {2, 0, 0, 0, 0, 2};
    EXPECT_EQ(0, std::memcmp(e.data(), dst, 6));
    const uint8_t src_v1[6] = {0x52, 0x54, 0, 0x12, 0x34, 0x56};
    const uint8_t src_v2[6] = {0x52, 0x54, 0, 0xab, 0xcd, 0xef};
    EXPECT_EQ(0, std::memcmp(e.data() + 6, link == linktype::kSll ? src_v1 : src_v2, 6));
    PacketLayout L = parse_packet(e.data(), uint32_t(e.size()));
    EXPECT_TRUE(L.ok() && L.is_udp());
    std::remove(f.c_str());
  }
}

TEST(LinkLayer, SllLlcFramesBecome8023FramesWithALengthField) {
  const std::vector<uint8_t> llc = {0x42, 0x42, 0x03, 0, 0, 0, 0, 0, 0, 0};  // STP over LLC
  static uint8_t big[kMaxFrame];
  uint32_t len = 0, wire = 0;
  const auto rec = sll(0x0004, llc);
  ASSERT_EQ(to_ethernet(linktype::kSll, rec.data(), uint32_t(rec.size()), 0, big, len, wire), "");
  EXPECT_EQ(len, 14 + llc.size());
  EXPECT_EQ(load_be16(big + 12), llc.size());  // an 802.3 length, not an EtherType
}

TEST(LinkLayer, BsdLoopbackInEitherByteOrderAndOpenBsdLoop) {
  const auto v4 = udp4(), v6 = udp6();
  const std::string f = tmp("null.pcap");
  // NULL: the family in the capturing host's order (little-endian here, big-endian as a SPARC
  // or PowerPC host would write it); IPv6 as NetBSD (24), FreeBSD (28) and macOS (30) number it.
  write_pcap(f, linktype::kNull,
             {{concat(loop_hdr(2, false), ip_of(v4)), 0},
              {concat(loop_hdr(2, true), ip_of(v4)), 0},
              {concat(loop_hdr(24, false), ip_of(v6)), 0},
              {concat(loop_hdr(28, true), ip_of(v6)), 0},
              {concat(loop_hdr(30, false), ip_of(v6)), 0}});
  Read r = read_all(f);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.frames.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    const auto& want = i < 2 ? v4 : v6;
    ASSERT_EQ(r.frames[i].size(), want.size()) << i;
    EXPECT_EQ(0, std::memcmp(r.frames[i].data() + 12, want.data() + 12, want.size() - 12)) << i;
  }
  write_pcap(f, linktype::kLoop, {{concat(loop_hdr(2, true), ip_of(v4)), 0}});
  r = read_all(f);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(load_be16(r.frames[0].data() + 12), 0x0800);
  // A family that is not IP: one clear error naming the file, the packet and the fix.
  write_pcap(
      f, linktype::kNull,
      {{concat(loop_hdr(2, false), ip_of(v4)), 0}, {concat(loop_hdr(7, false), ip_of(v4)), 0}});
  r = read_all(f);
  EXPECT_EQ(r.frames.size(), 1u);
  EXPECT_NE(r.error.find("null.pcap: packet 2: BSD loopback address family 7"), std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("'ip or ip6'"), std::string::npos) << r.error;
  std::remove(f.c_str());
}

TEST(LinkLayer, RawIpByVersionNibble) {
  const auto v4 = udp4(), v6 = udp6();
  for (uint32_t link : {linktype::kRaw, linktype::kDltRaw12, linktype::kDltRaw14}) {
    const std::string f = tmp("raw.pcap");
    write_pcap(f, link, {{ip_of(v4), 0}, {ip_of(v6), 0}});
    Read r = read_all(f);
    ASSERT_EQ(r.error, "") << link;
    ASSERT_EQ(r.frames.size(), 2u);
    EXPECT_EQ(0, std::memcmp(r.frames[0].data() + 12, v4.data() + 12, v4.size() - 12));
    EXPECT_EQ(0, std::memcmp(r.frames[1].data() + 12, v6.data() + 12, v6.size() - 12));
    std::remove(f.c_str());
  }
  const std::string f = tmp("raw6.pcap");
  write_pcap(f, linktype::kIpv6, {{ip_of(v6), 0}});
  Read r = read_all(f);
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(load_be16(r.frames[0].data() + 12), 0x86DD);
  auto junk = ip_of(v4);
  junk[0] = 0x55;  // version 5
  write_pcap(f, linktype::kRaw, {{junk, 0}});
  r = read_all(f);
  EXPECT_NE(r.error.find("packet 1: raw IP record of IP version 5"), std::string::npos) << r.error;
  std::remove(f.c_str());
}

TEST(LinkLayer, RecordShorterThanItsHeaderIsAnError) {
  const std::string f = tmp("short.pcap");
  write_pcap(f, linktype::kSll, {{std::vector<uint8_t>(10, 0), 10}});
  Read r = read_all(f);
  EXPECT_NE(r.error.find("packet 1: record shorter than its LINUX_SLL"), std::string::npos)
      << r.error;
  std::remove(f.c_str());
}

TEST(LinkLayer, UnsupportedLinkTypesAreRefusedWithTheFix) {
  const std::string f = tmp("wifi.pcap");
  write_pcap(f, 127, {{udp4(), 0}});
  Read r = read_all(f);
  EXPECT_TRUE(r.frames.empty());
  EXPECT_NE(r.error.find("wifi.pcap: link type IEEE802_11_RADIOTAP (Wi-Fi) (127) is not supported"),
            std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("tcprewrite --dlt=enet"), std::string::npos) << r.error;
  std::remove(f.c_str());
}

// The link-type field's high 16 bits say whether and how long an FCS the frames carry (the F bit
// 26, the length in bits 28-31); the type is its low 16 bits, as libpcap reads it.
TEST(LinkLayer, FcsBitsOfTheLinkTypeFieldAreNotPartOfTheType) {
  for (uint32_t field : {0x04000001u, 0x34000001u, 0x30000001u}) {
    const std::string f = tmp("fcs.pcap");
    write_pcap(f, field, {{udp4(), 0}});
    Read r = read_all(f);
    EXPECT_EQ(r.error, "") << std::hex << field;
    ASSERT_EQ(r.frames.size(), 1u) << std::hex << field;
    EXPECT_EQ(r.frames[0], udp4());
    std::remove(f.c_str());
  }
  // tcpdump's bootp_asan.pcap: Ethernet, written as 0x04000001 (tests/data/README.md).
  TraceReader rd;
  ASSERT_TRUE(rd.open(NFPARK_TEST_DATA "/bootp_asan.pcap")) << rd.error();
  EXPECT_EQ(rd.link_type(), linktype::kEthernet);
  Read real = read_all(NFPARK_TEST_DATA "/bootp_asan.pcap");
  EXPECT_EQ(real.error, "");
  ASSERT_EQ(real.frames.size(), 1u);
  EXPECT_EQ(real.frames[0].size(), 90u);
  EXPECT_EQ(real.wire[0], 65570u);
  // A refused type is named by its low 16 bits.
  const std::string f = tmp("fcs-wifi.pcap");
  write_pcap(f, 0x0400007f, {{udp4(), 0}});
  EXPECT_NE(read_all(f).error.find("IEEE802_11_RADIOTAP (Wi-Fi) (127) is not supported"),
            std::string::npos);
  std::remove(f.c_str());
}

TEST(LinkLayer, PcapngInterfaceOfAnotherLinkType) {
  // SHB, an IDB of LINUX_SLL, one EPB.
  const auto rec = sll(0x0800, ip_of(udp4()));
  std::vector<uint8_t> b;
  auto u32 = [&](uint32_t v) {
    b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4);
  };
  auto u16 = [&](uint16_t v) {
    b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 2);
  };
  u32(0x0A0D0D0A), u32(28), u32(0x1A2B3C4D), u16(1), u16(0), u32(0xffffffff), u32(0xffffffff),
      u32(28);
  u32(1), u32(20), u16(linktype::kSll), u16(0), u32(0), u32(20);
  const uint32_t pad = (4 - rec.size() % 4) % 4, blen = uint32_t(32 + rec.size() + pad);
  u32(6), u32(blen), u32(0), u32(0), u32(1), u32(uint32_t(rec.size())), u32(uint32_t(rec.size()));
  b.insert(b.end(), rec.begin(), rec.end());
  b.insert(b.end(), pad, 0);
  u32(blen);
  const std::string f = tmp("sll.pcapng");
  std::ofstream(f, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  Read r = read_all(f);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(0, std::memcmp(r.frames[0].data() + 12, udp4().data() + 12, udp4().size() - 12));
  std::remove(f.c_str());
}

// The real captures of other link types in tests/data parse as IP after conversion.
TEST(LinkLayer, RealCapturesOfOtherLinkTypes) {
  struct Case {
    const char* file;
    uint32_t link;
    size_t packets;
    uint8_t ip_version;
  };
  for (const Case& c : {Case{"mptcp-v1.pcap", linktype::kSll, 20, 4},
                        Case{"dns-badcookie.pcap", linktype::kNull, 4, 4},
                        Case{"bgp-addpath.pcap", linktype::kRaw, 1, 4},
                        Case{"babel_rtt.pcap", linktype::kRaw, 9, 6}}) {
    const std::string path = std::string(NFPARK_TEST_DATA "/") + c.file;
    TraceReader rd;
    ASSERT_TRUE(rd.open(path)) << rd.error();
    EXPECT_EQ(rd.link_type(), c.link);
    PacketRecord rec;
    size_t n = 0, ip = 0;
    uint32_t largest = 0;
    while (rd.next(rec) == ReadStatus::kPacket) {
      ++n;
      PacketLayout L = parse_packet(rec.data, rec.len);
      ip += L.ip_version == c.ip_version && L.status != ParseStatus::kMalformed;
      largest = std::max(largest, rec.wire_len);
    }
    EXPECT_EQ(rd.error(), "") << c.file;
    EXPECT_EQ(n, c.packets) << c.file;
    EXPECT_EQ(ip, n) << c.file;
    // tshark: mptcp-v1.pcap's largest SLL frame is 7196 B, 7194 B as Ethernet.
    if (c.link == linktype::kSll) {
      EXPECT_EQ(largest, 7196u - 16 + 14);
    }
  }
}

}  // namespace
}  // namespace nfpark::trace
