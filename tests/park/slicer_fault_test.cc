// Slicer under hostile or broken input: forged, replayed and cross-core tokens, traffic that
// already carries DSCP 63, missing buffers/headroom, and a randomized run with NF drops, delays
// and forgeries in which every output must be byte-identical to the unsliced baseline.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "park/slicer.h"
#include "park/slicer_fixtures.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using H = VecPkt*;
using Bytes = std::vector<uint8_t>;
using S = Slicer<VecBuffer>;

using testing::udp4;
uint32_t token_at(const Bytes& b) {
  return parse_packet(b.data(), uint32_t(b.size())).payload_off;
}
uint64_t token_of(H h) {
  return load_be64(h->bytes.data() + token_at(h->bytes));
}
void set_token(H h, uint64_t t) {
  store_be64(h->bytes.data() + token_at(h->bytes), t);
}
H copy(H h) {
  return VecBuffer::make(h->bytes, h->id);
}

class SlicerFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { live0_ = VecBuffer::live; }
  void TearDown() override { EXPECT_EQ(VecBuffer::live, live0_) << "leaked packets"; }
  H split(S& s, Bytes b, uint8_t core = 0) {
    s.split(VecBuffer::make(std::move(b)), core, host_, wire_);
    EXPECT_EQ(host_.size(), 1u);
    H h = host_[0];
    host_.clear();
    return h;
  }
  std::optional<Bytes> merge(S& s, H h) {
    s.merge(h, wire_);
    if (wire_.empty()) return std::nullopt;
    EXPECT_EQ(wire_.size(), 1u);
    Bytes b = wire_[0]->bytes;
    VecBuffer::free(wire_[0]);
    wire_.clear();
    return b;
  }
  int64_t live0_ = 0;
  Emitter<H> host_, wire_;
};

TEST_F(SlicerFaultTest, RandomTokensNeverSplice) {
  SlicerConfig c;
  c.entries = 64;
  c.cores = 2;
  S s(c);
  std::vector<H> live;
  for (uint64_t i = 0; i < 64; ++i) live.push_back(split(s, udp4(1000, i), uint8_t(i % 2)));
  std::mt19937_64 rng(7);
  const TokenLayout& tl = s.token_layout();
  for (int i = 0; i < 20000; ++i) {
    H f = copy(live[size_t(i) % live.size()]);
    uint64_t t = rng();
    if (i % 2) t = tl.make(uint8_t(i % 4 / 2), t, tl.index(t));  // valid core: only gen guards
    set_token(f, t);
    EXPECT_FALSE(merge(s, f)) << std::hex << t;
  }
  const auto& k = s.counters();
  EXPECT_EQ(k.spliced, 0u);
  EXPECT_EQ(k.drop_bad_token + k.drop_generation + k.drop_expired, 20000u);
  EXPECT_GT(k.drop_generation, 5000u);  // half had a valid core and hit live entries
  for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(*merge(s, live[i]), udp4(1000, i));  // intact
  s.drain();
}

TEST_F(SlicerFaultTest, TokenMovedToAnotherCoreNeverSplices) {
  SlicerConfig c;
  c.cores = 2;
  S s(c);
  H a = split(s, udp4(1000, 1), 0);
  H b = split(s, udp4(1000, 2), 1);  // same index and insert count on core 1
  EXPECT_EQ(s.token_layout().index(token_of(a)), s.token_layout().index(token_of(b)));
  EXPECT_NE(s.token_layout().generation(token_of(a)), s.token_layout().generation(token_of(b)));
  H f = copy(a);
  set_token(f, token_of(a) | uint64_t(1) << 56);  // claim to be core 1's
  EXPECT_FALSE(merge(s, f));
  EXPECT_EQ(s.counters().drop_generation, 1u);
  EXPECT_EQ(*merge(s, a), udp4(1000, 1));
  EXPECT_EQ(*merge(s, b), udp4(1000, 2));
  s.drain();
}

TEST_F(SlicerFaultTest, ReplayedTokenIsDroppedBeforeAndAfterReuse) {
  SlicerConfig c;
  c.entries = 2;
  S s(c);
  H a = split(s, udp4(1000, 1));
  H replay1 = copy(a), replay2 = copy(a);
  EXPECT_EQ(*merge(s, a), udp4(1000, 1));
  EXPECT_FALSE(merge(s, replay1));  // entry empty now
  EXPECT_EQ(s.counters().drop_expired, 1u);
  H x = split(s, udp4(1000, 2)), y = split(s, udp4(1000, 3));  // y reuses entry 0
  EXPECT_FALSE(merge(s, replay2));
  EXPECT_EQ(s.counters().drop_generation, 1u);
  EXPECT_EQ(*merge(s, x), udp4(1000, 2));
  EXPECT_EQ(*merge(s, y), udp4(1000, 3));
  s.drain();
}

// Wire DSCP 63 means nothing to the splice side: whole packets carrying it pass both ways
// untouched (no escape), even with a live token as their first payload bytes; ICMP too (a NAT
// reads the header an ICMP error quotes right after the ICMP header). A payload that begins
// with the escape token itself is escaped, so the splice strips exactly the one it added.
TEST_F(SlicerFaultTest, WireDscp63PassesUntouchedAndEscapesAreOnlyForLookalikes) {
  S s(SlicerConfig{});
  H live = split(s, udp4(1000, 1));
  const uint64_t live_tok = token_of(live);
  Bytes crafted = udp4(200, 2, 63);
  store_be64(crafted.data() + token_at(crafted), live_tok);
  const std::vector<Bytes> plain = {
      udp4(300, 3, 63), crafted,
      PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").udp(1, 2).dscp(63).frame_size(400).build(),
      PacketBuilder()
          .ipv4("10.0.0.1", "10.0.0.2")
          .icmp_echo(5, 6)
          .dscp(63)
          .payload_size(900)
          .build()};
  for (const Bytes& in : plain) {
    H h = split(s, in);
    EXPECT_EQ(h->bytes, in);
    const PacketLayout L = parse_packet(h->bytes.data(), uint32_t(h->bytes.size()));
    EXPECT_EQ(
        inspect_slice(h->bytes.data(), uint32_t(h->bytes.size()), uint32_t(h->bytes.size()), L)
            .mark,
        SliceMark::kPlain);
    EXPECT_EQ(*merge(s, h), in);
  }
  Bytes lookalike = udp4(300, 4, 63);
  store_be64(lookalike.data() + token_at(lookalike), kEscapeToken);
  H h = split(s, lookalike);
  ASSERT_EQ(h->bytes.size(), lookalike.size() + kTokenBytes);
  const PacketLayout L = parse_packet(h->bytes.data(), uint32_t(h->bytes.size()));
  const SliceInfo info =
      inspect_slice(h->bytes.data(), uint32_t(h->bytes.size()), uint32_t(h->bytes.size()), L);
  EXPECT_EQ(info.mark, SliceMark::kEscaped);
  EXPECT_EQ(info.wire_len, lookalike.size());
  EXPECT_EQ(*merge(s, h), lookalike);
  EXPECT_EQ(s.counters().escaped, 1u);
  EXPECT_EQ(s.counters().unescaped, 1u);
  EXPECT_EQ(s.counters().passed, 4u);
  EXPECT_EQ(*merge(s, live), udp4(1000, 1));  // the crafted copy of its token did not steal it
  // busy entry: a slice-worthy DSCP-63 packet that must go whole passes as it is
  SlicerConfig c1;
  c1.entries = 1;
  S one(c1);
  H held = split(one, udp4(1000, 7));
  H whole = split(one, udp4(1000, 8, 63));
  EXPECT_EQ(one.counters().unsliced_busy, 1u);
  EXPECT_EQ(whole->bytes, udp4(1000, 8, 63));
  EXPECT_EQ(*merge(one, whole), udp4(1000, 8, 63));
  EXPECT_EQ(*merge(one, held), udp4(1000, 7));
  s.drain();
  one.drain();
}

// Packets the host sends that never went through split(): a whole one passes untouched whatever
// its DSCP; one shaped like a header packet (shorter than its IP length, 8 bytes after its L4
// header) is read as one and dropped — never spliced onto a payload it was not issued.
TEST_F(SlicerFaultTest, HostOriginatedPacketsPassOrDropNeverSplice) {
  S s(SlicerConfig{});
  H live = split(s, udp4(1000, 1));
  const Bytes own = udp4(1000, 2, 63);  // never went through split(): no token
  EXPECT_EQ(*merge(s, VecBuffer::make(own)), own);
  H cut = VecBuffer::make(udp4(1000, 3, 63));  // header-packet shaped, random "token"
  cut->bytes.resize(token_at(cut->bytes) + 8);
  EXPECT_FALSE(merge(s, cut));
  H guess = copy(live);  // header-packet shaped with the live entry's index, another generation
  const TokenLayout& tl = s.token_layout();
  set_token(guess, tl.make(0, tl.generation(token_of(live)) + 1, tl.index(token_of(live))));
  EXPECT_FALSE(merge(s, guess));
  EXPECT_EQ(s.counters().merge_drops(), 2u);
  EXPECT_EQ(s.counters().spliced, 0u);
  Bytes junk(40, 0xAB);  // not IP at all: passes, whatever it holds
  EXPECT_EQ(*merge(s, VecBuffer::make(junk)), junk);
  EXPECT_EQ(*merge(s, live), udp4(1000, 1));
  s.drain();
}

struct ScarceBuffer : VecBuffer {
  static inline bool no_header = false, no_gap = false;
  static Handle make_header(Handle o, uint32_t h, uint32_t g, uint32_t to, uint32_t tl, Lent* l) {
    return no_header ? nullptr : VecBuffer::make_header(o, h, g, to, tl, l);
  }
  static uint8_t* open_gap(Handle h, uint32_t at, uint32_t n) {
    return no_gap ? nullptr : VecBuffer::open_gap(h, at, n);
  }
};

TEST_F(SlicerFaultTest, NoBufferSendsWholeNoHeadroomDropsCounted) {
  Slicer<ScarceBuffer> s(SlicerConfig{});
  ScarceBuffer::no_header = true;
  s.split(VecBuffer::make(udp4(1000, 1)), 0, host_, wire_);
  ASSERT_EQ(host_.size(), 1u);
  EXPECT_EQ(host_[0]->bytes, udp4(1000, 1));
  EXPECT_EQ(s.counters().unsliced_no_buffer, 1u);
  EXPECT_EQ(s.live(), 0u);  // the claimed entry was given back
  s.merge(host_[0], wire_);
  host_.clear();
  ScarceBuffer::no_gap = true;  // a header-only capture cannot be escaped: dropped, counted
  Bytes cut = udp4(1000, 2);
  cut.resize(token_at(cut) + 20);
  s.split(VecBuffer::make(cut), 0, host_, wire_);
  EXPECT_TRUE(host_.empty());
  EXPECT_EQ(s.counters().split_no_headroom, 1u);
  ScarceBuffer::no_header = ScarceBuffer::no_gap = false;
  ASSERT_EQ(wire_.size(), 1u);
  VecBuffer::free(wire_[0]);
  wire_.clear();
  s.drain();
}

// Mixed traffic, 10% of it cut to its headers and 12 bytes; the host drops 5%, delays 15% by
// up to 300 packets, forges 2% of tokens.
TEST_F(SlicerFaultTest, RandomizedFaultsNeverMisSplice) {
  SlicerConfig c;
  c.entries = 64;
  c.ttl = 2;
  c.cores = 2;
  S s(c);
  std::mt19937_64 rng(42);
  std::map<uint64_t, Bytes> expect;
  std::vector<std::pair<uint64_t, H>> delayed;  // release time, packet
  uint64_t forged = 0, nf_dropped = 0, out = 0;
  auto deliver = [&](H h) {
    auto o = merge(s, h);
    if (!o) return;
    ++out;
    const PacketLayout L = parse_packet(o->data(), uint32_t(o->size()));
    auto id = read_packet_id(o->data() + L.payload_off, uint32_t(o->size()) - L.payload_off);
    ASSERT_TRUE(id);
    ASSERT_EQ(*o, expect.at(*id)) << "packet " << *id;
    EXPECT_TRUE(verify_checksums(o->data(), L));
  };
  const uint8_t dscps[] = {0, 46, 63};
  for (uint64_t id = 0; id < 6000; ++id) {
    const uint32_t frame = 100 + uint32_t(rng() % 1419);
    PacketBuilder b;
    if (rng() % 4 == 0)
      b.ipv6("2001:db8::1", "2001:db8::2");
    else
      b.ipv4("10.0.0.1", "10.0.0.2");
    if (rng() % 2)
      b.tcp(1, 2);
    else
      b.udp(3, 4);
    expect[id] = b.dscp(dscps[rng() % 3]).frame_size(frame).packet_id(id).build();
    if (rng() % 10 == 0)  // a header-only capture of it (IP length above the frame): escaped
      expect[id].resize(std::min<size_t>(expect[id].size(), token_at(expect[id]) + 12));
    H h = split(s, expect[id], uint8_t(rng() % 2));
    const uint64_t r = rng() % 100;
    if (r < 5) {
      VecBuffer::free(h);
      ++nf_dropped;
    } else if (r < 20) {
      delayed.push_back({id + rng() % 300, h});
    } else {
      const PacketLayout L = parse_packet(h->bytes.data(), uint32_t(h->bytes.size()));
      if (r < 22 &&  // forge ring tokens (an escaped packet's bytes are the host's to mangle)
          inspect_slice(h->bytes.data(), uint32_t(h->bytes.size()), uint32_t(h->bytes.size()), L)
                  .mark == SliceMark::kSliced) {
        set_token(h, rng());
        ++forged;
      }
      deliver(h);
    }
    for (size_t k = 0; k < delayed.size();) {
      if (delayed[k].first > id) {
        ++k;
        continue;
      }
      deliver(delayed[k].second);
      delayed[k] = delayed.back();
      delayed.pop_back();
    }
  }
  for (auto& d : delayed) deliver(d.second);
  s.drain();
  const auto& k = s.counters();
  EXPECT_EQ(k.rx, 6000u);
  EXPECT_EQ(k.rx, 6000u - k.split_drops());  // every split packet reached the host
  EXPECT_EQ(k.returned, 6000u - nf_dropped);
  EXPECT_EQ(k.returned, out + k.merge_drops());
  EXPECT_EQ(k.sliced, k.spliced + k.expired + k.stranded_at_exit + k.merge_no_headroom);
  EXPECT_GE(k.merge_drops(), forged);
  EXPECT_GT(k.sliced, 1000u);
  EXPECT_GT(k.unsliced_busy, 0u);
  EXPECT_GT(k.expired, 0u);
  EXPECT_GT(k.escaped, 0u);
}

}  // namespace
}  // namespace nfpark::park
