// FaultInjector (park/fault_injector.h) over VecBuffer: its decisions are deterministic and
// counted, every corruption is one a codec must reject, and a forged tag — random, replayed
// from an earlier burst, another packet's — is never merged by any mode: every packet that
// leaves carries its own payload under its own header (IPv4 id = the payload's packet id).
#include "park/fault_injector.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "park/nf_endpoint.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "park/slicer.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using Injector = FaultInjector<VecBuffer>;

auto copier() {
  return [](VecPkt* p) { return VecBuffer::make(p->bytes, p->id); };
}

std::vector<uint8_t> frame(uint64_t id, uint32_t payload) {
  return PacketBuilder()
      .ipv4("10.0.0.1", "10.0.0.2")
      .udp(uint16_t(1000 + id % 50), 80)
      .payload_size(payload)
      .packet_id(id)
      .build();
}

// Runs `n` packets (ids 0..n-1) through a burst of the injector; returns the ids that left.
std::vector<uint64_t> run_burst(Injector& fi, uint32_t n, Nanos now) {
  std::vector<VecPkt*> in;
  std::vector<uint32_t> tags(n, 0);
  for (uint32_t i = 0; i < n; ++i) in.push_back(VecBuffer::make(frame(i, 40), i));
  std::vector<VecPkt*> out;
  fi.apply(in.data(), tags.data(), uint16_t(n), now, out, copier());
  std::vector<uint64_t> ids;
  for (VecPkt* p : out) {
    ids.push_back(p->id);
    VecBuffer::free(p);
  }
  return ids;
}

TEST(FaultInjector, DecisionsAreDeterministicAndCounted) {
  FaultConfig f;
  f.drop = 0.1;
  f.dup = 0.1;
  f.reorder = 0.2;
  f.seed = 7;
  Injector a(f, {}), b(f, {});
  uint64_t in = 0, out = 0;
  for (int burst = 0; burst < 200; ++burst) {
    const auto x = run_burst(a, 32, burst), y = run_burst(b, 32, burst);
    ASSERT_EQ(x, y) << "same seed, same faults";
    in += 32;
    out += x.size();
  }
  const FaultCounters& c = a.counters();
  EXPECT_EQ(in + c.duplicated, out + c.dropped);
  EXPECT_NEAR(double(c.dropped) / double(in), 0.1, 0.02);
  EXPECT_NEAR(double(c.duplicated) / double(in - c.dropped), 0.1, 0.02);
  EXPECT_GT(c.reordered, 0u);
  f.seed = 8;
  Injector d(f, {});
  EXPECT_NE(run_burst(d, 32, 0), run_burst(b, 32, 0)) << "another seed, other faults";
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(FaultInjector, DelayedPacketsLeaveWhenDueInOrder) {
  FaultConfig f;
  f.delay_us = 10;
  Injector fi(f, {});
  EXPECT_TRUE(run_burst(fi, 4, 1000).empty());
  EXPECT_EQ(fi.held(), 4u);
  std::vector<VecPkt*> out;
  fi.release(1000 + 9999, false, out);
  EXPECT_TRUE(out.empty());
  fi.release(1000 + 10000, false, out);
  ASSERT_EQ(out.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(out[i]->id, i);
  for (VecPkt* p : out) VecBuffer::free(p);
  EXPECT_EQ(fi.counters().delayed, 4u);
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(FaultInjector, DelayShareDelaysOnlyThatShare) {
  FaultConfig f;
  f.delay_us = 10;
  f.delay_share = 0.25;
  Injector fi(f, {});
  uint64_t now_out = 0;
  for (int burst = 0; burst < 100; ++burst) now_out += run_burst(fi, 32, 0).size();
  EXPECT_EQ(now_out + fi.held(), 3200u);
  EXPECT_NEAR(double(fi.counters().delayed) / 3200, 0.25, 0.03);
  std::vector<VecPkt*> out;
  fi.release(10000, false, out);
  EXPECT_EQ(out.size(), fi.counters().delayed);
  for (VecPkt* p : out) VecBuffer::free(p);
  EXPECT_EQ(VecBuffer::live, 0);
}

// Every corruption is rejected by the format's codec (or names no issued token).
TEST(FaultInjector, CorruptedTagsAreAlwaysRejected) {
  for (auto fmt : {TagFormat::kNfpark, TagFormat::kPayloadPark}) {
    TagCodec codec(fmt);
    TagShape shape{fmt == TagFormat::kNfpark ? TagShape::kNfpark : TagShape::kPayloadPark};
    FaultConfig f;
    f.corrupt_tag = 1;
    Injector fi(f, shape);
    for (uint32_t k = 0; k < 2000; ++k) {
      ParkTag t;
      t.parked = k % 2;
      t.index = k;
      t.generation = k * 7;
      std::vector<uint8_t> b(64 + codec.size(), 0);
      codec.encode(t, b.data() + 64);
      VecPkt* p = VecBuffer::make(b, k);
      const uint32_t at = 64;
      std::vector<VecPkt*> out;
      fi.apply(&p, &at, 1, 0, out, copier());
      ASSERT_EQ(out.size(), 1u);
      ParkTag got;
      EXPECT_NE(codec.decode(out[0]->bytes.data() + 64, codec.size(), got), TagError::kNone)
          << to_string(fmt) << " tag " << k << " corrupted yet accepted";
      VecBuffer::free(out[0]);
    }
    EXPECT_EQ(fi.counters().corrupted, 2000u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

// A mode, its NF endpoint and a forging injector: bursts of packets go through split, the
// injector (forge only) and merge. Whatever leaves must be its own packet.
struct Outcome {
  uint64_t in = 0, out = 0, forged = 0, wrong = 0;
};

// Counts and frees what left; `wrong`: a packet that is not exactly one of the frames sent
// (payload id, IPv4 id and every byte).
void check_out(std::vector<VecPkt*>& left, Outcome& o) {
  for (VecPkt* p : left) {
    const PacketLayout L = parse_packet(p->bytes.data(), uint32_t(p->bytes.size()));
    const auto id =
        read_packet_id(p->bytes.data() + L.payload_off, uint32_t(p->bytes.size() - L.payload_off));
    const uint16_t ip_id = load_be16(p->bytes.data() + L.l3_off + 4);
    if (!id || uint16_t(*id) != ip_id || p->bytes != frame(*id, uint32_t(p->bytes.size() - 42)))
      ++o.wrong;
    ++o.out;
    VecBuffer::free(p);
  }
  left.clear();
}

// `after_burst`: called once the NF side has sent back all of a burst (nothing in flight).
template <typename Split, typename Merge, typename AfterBurst = void (*)()>
Outcome forge_through(
    TagShape shape, NfEndpoint<VecBuffer>& ep, Split split, Merge merge, std::mt19937& rng,
    AfterBurst after_burst = [] {}) {
  FaultConfig f;
  f.forge_tag = 0.3;
  f.seed = rng();
  Injector fi(f, shape);
  Outcome o;
  std::vector<VecPkt*> left;
  for (int burst = 0; burst < 300; ++burst) {
    std::vector<VecPkt*> to_nf;
    for (int i = 0; i < 16; ++i, ++o.in) {
      const uint32_t pay = rng() % 4 == 0 ? 20 + rng() % 100 : 200 + rng() % 1200;
      split(VecBuffer::make(frame(o.in, pay), o.in), to_nf);
    }
    std::vector<uint32_t> tags(to_nf.size());
    for (size_t i = 0; i < to_nf.size(); ++i) {
      PacketView v;
      ep.view(to_nf[i], v, tags[i]);
    }
    std::vector<VecPkt*> back;
    fi.apply(to_nf.data(), tags.data(), uint16_t(to_nf.size()), burst, back, copier());
    for (VecPkt* p : back) merge(p, left);
    after_burst();
  }
  check_out(left, o);
  o.forged = fi.counters().forged;
  return o;
}

TEST(FaultInjector, ForgedTagsAreNeverMergedByPayloadPark) {
  for (auto fmt : {TagFormat::kNfpark, TagFormat::kPayloadPark}) {
    std::mt19937 rng(3);
    ParkConfig c;
    c.format = fmt;
    c.slots = 64;
    PayloadPark<VecBuffer> pp(c);
    NfEndpoint<VecBuffer> ep(fmt, true);
    const Outcome o = forge_through(
        {fmt == TagFormat::kNfpark ? TagShape::kNfpark : TagShape::kPayloadPark}, ep,
        [&](VecPkt* p, std::vector<VecPkt*>& nf) {
          if (VecPkt* h = pp.split(p, 0)) nf.push_back(h);
        },
        [&](VecPkt* p, std::vector<VecPkt*>& out) {
          if (VecPkt* m = pp.merge(p, 0)) out.push_back(m);
        },
        rng);
    pp.drain();
    EXPECT_GT(o.forged, 500u) << to_string(fmt);
    EXPECT_EQ(o.wrong, 0u) << to_string(fmt) << ": a forged tag was merged";
    EXPECT_EQ(o.in, o.out + pp.counters().packet_drops()) << to_string(fmt);
    EXPECT_EQ(o.forged, pp.counters().packet_drops()) << "each forged tag dropped, nothing else";
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(FaultInjector, ForgedTagsAreNeverMergedByQueueMem) {
  std::mt19937 rng(4);
  QueueMemConfig c;  // 8 queues of 4: a burst of 16 fits while a forged header stalls one
  c.queues = 8;
  c.slices = 1;
  c.batch = 4;
  QueueMem<VecBuffer> qm(c);
  NfEndpoint<VecBuffer> ep(TagFormat::kNfpark, true);
  Emitter<VecPkt*> nf, out;
  std::deque<VecPkt*> refused;  // back-pressure: offered again first, in order
  auto offer = [&](std::vector<VecPkt*>& to_nf) {
    while (!refused.empty() && qm.split(refused.front(), 0, nf, out)) refused.pop_front();
    for (size_t i = 0; i < nf.size(); ++i) to_nf.push_back(nf[i]);
    nf.clear();
  };
  Outcome o = forge_through(
      {TagShape::kNfpark}, ep,
      [&](VecPkt* p, std::vector<VecPkt*>& to_nf) {
        refused.push_back(p);
        offer(to_nf);
      },
      [&](VecPkt* p, std::vector<VecPkt*>& left) {
        qm.merge(p, 0, out);
        for (size_t i = 0; i < out.size(); ++i) left.push_back(out[i]);
        out.clear();
      },
      rng, [&] { qm.nf_idle(out); });  // a forged header is lost: its batch leaves without it
  while (!refused.empty()) {           // the last burst's refused packets, through an honest NF
    std::vector<VecPkt*> to_nf;
    offer(to_nf);
    ASSERT_FALSE(to_nf.empty()) << "refused with nothing in flight";
    for (VecPkt* p : to_nf) qm.merge(p, 0, out);
    qm.nf_idle(out);
  }
  qm.drain(out);
  std::vector<VecPkt*> drained(out.data(), out.data() + out.size());
  check_out(drained, o);
  EXPECT_GT(o.forged, 500u);
  EXPECT_EQ(o.wrong, 0u) << "a forged tag was merged";
  EXPECT_EQ(o.forged, qm.counters().packet_drops());
  EXPECT_EQ(o.in, o.out + qm.counters().packet_drops());
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(FaultInjector, ForgedTokensAreNeverSplicedByNfSlicer) {
  std::mt19937 rng(5);
  SlicerConfig c;
  c.entries = 256;
  c.thr = 200;  // most frames sliced
  c.key[0] = 99;
  Slicer<VecBuffer> sl(c);
  NfEndpoint<VecBuffer> ep(std::nullopt, false, true);
  Emitter<VecPkt*> host, wire;
  const Outcome o = forge_through(
      {TagShape::kSlicerToken}, ep,
      [&](VecPkt* p, std::vector<VecPkt*>& to_nf) {
        sl.split(p, 0, host, wire);
        for (size_t i = 0; i < host.size(); ++i) to_nf.push_back(host[i]);
        host.clear();
      },
      [&](VecPkt* p, std::vector<VecPkt*>& left) {
        sl.merge(p, wire);
        for (size_t i = 0; i < wire.size(); ++i) left.push_back(wire[i]);
        wire.clear();
      },
      rng);
  sl.drain();
  EXPECT_GT(o.forged, 200u);
  EXPECT_EQ(o.wrong, 0u) << "a forged token was spliced";
  EXPECT_EQ(o.in, o.out + sl.counters().packet_drops());
  EXPECT_EQ(VecBuffer::live, 0);
}

// An escaped whole packet (its payload began like NFSlicer's escape token) carries no record:
// corrupting or forging its escape token cannot be detected by any switch — the merge side sees
// a plain packet 8 bytes too long (found by the soak, crafted escape look-alikes). The injector
// leaves escape tokens alone, so such a packet still leaves exactly as it came.
TEST(FaultInjector, EscapeTokensAreNotTagsToCorruptOrForge) {
  for (int fault = 0; fault < 2; ++fault) {
    SlicerConfig c;
    c.thr = 2000;  // nothing sliced: every frame escaped
    Slicer<VecBuffer> sl(c);
    NfEndpoint<VecBuffer> ep(std::nullopt, false, true);
    FaultConfig f;
    (fault ? f.forge_tag : f.corrupt_tag) = 1;
    Injector fi(f, {TagShape::kSlicerToken});
    Emitter<VecPkt*> host, wire;
    std::vector<std::vector<uint8_t>> sent;
    for (uint64_t burst = 0; burst < 8; ++burst) {
      std::vector<VecPkt*> to_nf;
      for (uint64_t i = 0; i < 8; ++i) {
        std::vector<uint8_t> b = frame(sent.size(), 100);
        const PacketLayout L = parse_packet(b.data(), uint32_t(b.size()));
        store_be64(b.data() + L.payload_off, kEscapeToken);
        sent.push_back(b);
        sl.split(VecBuffer::make(b, sent.size() - 1), 0, host, wire);
        for (size_t k = 0; k < host.size(); ++k) to_nf.push_back(host[k]);
        host.clear();
      }
      std::vector<uint32_t> tags(to_nf.size());
      for (size_t k = 0; k < to_nf.size(); ++k) {
        PacketView v;
        ep.view(to_nf[k], v, tags[k]);
        ASSERT_NE(tags[k], 0u) << "the escape token is where the NF endpoint says";
      }
      std::vector<VecPkt*> back;
      fi.apply(to_nf.data(), tags.data(), uint16_t(to_nf.size()), Nanos(burst), back, copier());
      for (VecPkt* p : back) sl.merge(p, wire);
    }
    EXPECT_EQ(sl.counters().escaped, sent.size());
    ASSERT_EQ(wire.size(), sent.size()) << (fault ? "forge" : "corrupt");
    for (size_t k = 0; k < wire.size(); ++k) {
      EXPECT_EQ(wire[k]->bytes, sent[wire[k]->id]) << (fault ? "forge" : "corrupt") << " " << k;
      VecBuffer::free(wire[k]);
    }
    sl.drain();
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

}  // namespace
}  // namespace nfpark::park
