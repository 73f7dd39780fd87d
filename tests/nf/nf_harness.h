// Test harness for NFs: runs two identically configured NFs side by side, one on whole packets
// and one on header-only views of the same packets (len = headers, wire_len = whole frame),
// then merges the rewritten headers back onto the whole packets and checks that
//   (a) every passed IP packet's checksums verify by full recomputation, and
//   (b) the merged packet is byte-identical to the whole-packet run, with the same verdict.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/checksum.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "nf/nf.h"

namespace nfpark::nf::testing {

using Bytes = std::vector<uint8_t>;

inline PacketView view_of(Bytes& b, uint32_t len, uint32_t wire_len) {
  PacketView v;
  v.data = b.data();
  v.len = len;
  v.wire_len = wire_len;
  v.layout = parse_packet(b.data(), len);
  return v;
}

class Twin {
 public:
  Twin(std::unique_ptr<Nf> whole, std::unique_ptr<Nf> headers)
      : whole_(std::move(whole)), headers_(std::move(headers)) {}

  // Runs a burst through both NFs; rewrites `pkts` in place with the result and returns the
  // verdicts. Adds gtest failures when (a) or (b) does not hold.
  std::vector<Verdict> run(std::vector<Bytes>& pkts, Nanos now) {
    const size_t n = pkts.size();
    std::vector<Bytes> hdr(n);
    std::vector<PacketView> vw(n), vh(n);
    std::vector<Verdict> dw(n, Verdict::kPass), dh(n, Verdict::kPass);
    for (size_t i = 0; i < n; ++i) {
      PacketLayout L = parse_packet(pkts[i].data(), uint32_t(pkts[i].size()));
      uint32_t cut = L.payload_off ? L.payload_off : uint32_t(pkts[i].size());
      hdr[i].assign(pkts[i].begin(), pkts[i].begin() + cut);
      vw[i] = view_of(pkts[i], uint32_t(pkts[i].size()), uint32_t(pkts[i].size()));
      vh[i] = view_of(hdr[i], cut, uint32_t(pkts[i].size()));
    }
    whole_->process(vw, dw, now);
    headers_->process(vh, dh, now);
    for (size_t i = 0; i < n; ++i) {
      Bytes merged = pkts[i];
      std::copy(hdr[i].begin(), hdr[i].end(), merged.begin());
      EXPECT_EQ(dw[i], dh[i]) << "packet " << i << ": verdicts differ";
      EXPECT_EQ(merged, pkts[i]) << "packet " << i << ": header-only result differs";
      PacketLayout L = parse_packet(merged.data(), uint32_t(merged.size()));
      if (dw[i] == Verdict::kPass && L.ok() && L.ip_version != 0) {
        EXPECT_TRUE(verify_checksums(merged.data(), L)) << "packet " << i << ": bad checksum";
      }
    }
    return dw;
  }
  Verdict run1(Bytes& pkt, Nanos now) {
    std::vector<Bytes> v{pkt};
    Verdict r = run(v, now)[0];
    pkt = v[0];
    return r;
  }
  Nf& whole() { return *whole_; }
  Nf& headers() { return *headers_; }

 private:
  std::unique_ptr<Nf> whole_, headers_;
};

// Lets a Chain run inside a Twin.
class ChainNf final : public Nf {
 public:
  explicit ChainNf(std::unique_ptr<Chain> c) : c_(std::move(c)) {}
  std::string_view name() const override { return "chain"; }
  void process(std::span<PacketView> p, std::span<Verdict> v, Nanos now) override {
    c_->process(p, v, now);
  }
  void counters(const CounterSink& sink) const override { c_->counters(sink); }

 private:
  std::unique_ptr<Chain> c_;
};

template <class T, class... A>
Twin make_twin(const A&... args) {
  return Twin(std::make_unique<T>(args...), std::make_unique<T>(args...));
}

inline uint64_t counter(const Nf& nf, std::string_view name) {
  CounterMap m;
  nf.counters(m.sink());
  return m.get(name);
}

inline uint32_t ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d;
}

}  // namespace nfpark::nf::testing
