// The parking modes behind one interface for the mode fuzzer (fuzz_modes.cc) — PayloadPark
// (park 160/352/all, nfpark or 7-byte tags, CRC or keyed), QUEUE-MEM and NFSlicer, each the
// engine-neutral template from src/park over TrackBuffer, configured by the input (small tables,
// so that wrap-arounds, evictions, recoveries and reuse happen within a few hundred packets).
// A "lane" is what the engine passes with each packet: PayloadPark's NF slice, QUEUE-MEM's
// output port, NFSlicer's core.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fuzz/input.h"
#include "fuzz/track_buffer.h"
#include "park/emitter.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "park/slicer.h"

namespace nfpark::fuzz {

using Em = park::Emitter<TPkt*>;

class Mode {
 public:
  virtual ~Mode() = default;
  // False: refused for now (QUEUE-MEM's back-pressure); the caller offers it again later,
  // before anything that came after it.
  virtual bool split(TPkt* p, uint8_t lane, Em& to_nf, Em& to_out) = 0;
  virtual void merge(TPkt* p, uint8_t lane, Em& to_out) = 0;
  // Nothing is at the NF or on its way: the mode may give up on what is not back (QUEUE-MEM).
  virtual void nf_idle(Em&) {}
  virtual void drain(Em& to_out) = 0;
  virtual uint64_t packet_drops() const = 0;  // for in + copies = out + drops
  virtual uint64_t held() const = 0;          // payloads waiting now
  virtual uint8_t lanes() const = 0;          // lanes the engine may pass: [0, lanes)
  virtual uint32_t capacity() const = 0;      // packets in flight it holds without evicting
  // Whether a packet may come back on another lane than it left on. A lane that is an NF
  // server's own link (PayloadPark's slices) cannot be spoofed by that server; the 7-byte tag
  // does not even say which slice it belongs to, so only the nfpark tag is tried on another.
  virtual bool any_lane_back() const { return true; }
  virtual uint32_t tag_size() const = 0;  // bytes of tag/token after the L4 header
  virtual std::optional<park::TagFormat> nf_format() const { return std::nullopt; }
  virtual bool slicer() const { return false; }
  virtual bool by_flow() const { return false; }  // output order is only kept per flow
  virtual std::string name() const = 0;
  virtual void report(const CounterSink& s) const = 0;
  uint64_t counter(std::string_view name) const {
    uint64_t n = 0;
    report([&](std::string_view k, uint64_t v) { n += k == name ? v : 0; });
    return n;
  }
  // The non-zero counters, for failure messages.
  std::string counters() const {
    std::string r;
    report([&](std::string_view k, uint64_t v) {
      if (v) r += std::string(k) + "=" + std::to_string(v) + " ";
    });
    return r;
  }
};

class PayloadParkMode final : public Mode {
 public:
  explicit PayloadParkMode(const park::ParkConfig& c) : c_(c), pp_(c) {}
  bool split(TPkt* p, uint8_t lane, Em& to_nf, Em&) override {
    if (TPkt* h = pp_.split(p, lane)) to_nf.push(h);
    return true;
  }
  void merge(TPkt* p, uint8_t lane, Em& to_out) override {
    if (TPkt* m = pp_.merge(p, lane)) to_out.push(m);
  }
  void drain(Em&) override { pp_.drain(); }
  uint64_t packet_drops() const override { return pp_.counters().packet_drops(); }
  uint64_t held() const override { return pp_.parked(); }
  uint8_t lanes() const override { return c_.slices; }
  uint32_t capacity() const override { return c_.slots; }
  bool any_lane_back() const override { return c_.format == park::TagFormat::kNfpark; }
  uint32_t tag_size() const override { return pp_.codec().size(); }
  std::optional<park::TagFormat> nf_format() const override { return c_.format; }
  void report(const CounterSink& s) const override { pp_.counters().report(s); }
  std::string name() const override {
    return "payloadpark park_bytes " + std::to_string(c_.park_bytes) + " " +
           std::string(park::to_string(c_.format)) + (c_.key ? " keyed" : "");
  }

 private:
  park::ParkConfig c_;
  park::PayloadPark<TrackBuffer> pp_;
};

class QueueMemMode final : public Mode {
 public:
  explicit QueueMemMode(const park::QueueMemConfig& c) : c_(c), qm_(c) {}
  bool split(TPkt* p, uint8_t lane, Em& to_nf, Em& to_out) override {
    return qm_.split(p, lane, to_nf, to_out);
  }
  void merge(TPkt* p, uint8_t lane, Em& to_out) override { qm_.merge(p, lane, to_out); }
  void nf_idle(Em& to_out) override { qm_.nf_idle(to_out); }
  void drain(Em& to_out) override { qm_.drain(to_out); }
  uint64_t packet_drops() const override { return qm_.counters().packet_drops(); }
  uint64_t held() const override { return qm_.counters().held_pkts + qm_.paused_queues(); }
  uint8_t lanes() const override { return uint8_t(c_.ports + 1); }  // + a port without queues
  uint32_t capacity() const override { return 32; }
  uint32_t tag_size() const override { return qm_.codec().size(); }
  std::optional<park::TagFormat> nf_format() const override { return park::TagFormat::kNfpark; }
  bool by_flow() const override { return true; }
  void report(const CounterSink& s) const override { qm_.report(s); }
  std::string name() const override { return "queuemem"; }

 private:
  park::QueueMemConfig c_;
  park::QueueMem<TrackBuffer> qm_;
};

class SlicerMode final : public Mode {
 public:
  explicit SlicerMode(const park::SlicerConfig& c) : c_(c), sl_(c) {}
  bool split(TPkt* p, uint8_t lane, Em& to_nf, Em& to_out) override {
    sl_.split(p, lane, to_nf, to_out);
    return true;
  }
  void merge(TPkt* p, uint8_t, Em& to_out) override { sl_.merge(p, to_out); }
  void drain(Em&) override { sl_.drain(); }
  uint64_t packet_drops() const override { return sl_.counters().packet_drops(); }
  uint64_t held() const override { return sl_.live(); }
  uint8_t lanes() const override { return uint8_t(c_.cores + 1); }  // + a core without a ring
  uint32_t capacity() const override { return c_.entries; }
  uint32_t tag_size() const override { return park::kTokenBytes; }
  bool slicer() const override { return true; }
  void report(const CounterSink& s) const override { sl_.report(s); }
  std::string name() const override {
    return "nfslicer slice_bytes " + std::to_string(c_.slice_bytes);
  }

 private:
  park::SlicerConfig c_;
  park::Slicer<TrackBuffer> sl_;
};

// The mode and its configuration, from the input's first bytes.
inline std::unique_ptr<Mode> make_mode(Input& in) {
  const uint8_t which = in.u8() % 3;
  if (which == 0) {
    park::ParkConfig c;
    const uint32_t park_bytes[] = {160, 352, 0};
    c.park_bytes = park_bytes[in.u8() % 3];
    c.min_payload = in.flag() ? 160 : in.range(0, 200);
    c.slots = in.range(1, 64);
    c.max_exp = uint8_t(in.range(1, 3));
    c.slices = uint8_t(in.range(1, 2));
    c.format = in.flag() ? park::TagFormat::kPayloadPark : park::TagFormat::kNfpark;
    if (c.format == park::TagFormat::kNfpark && in.flag()) {
      std::array<uint8_t, 16> k;
      in.fill(k.data(), k.size());
      c.key = k;
    }
    return std::make_unique<PayloadParkMode>(c);
  }
  if (which == 1) {
    park::QueueMemConfig c;
    c.ports = uint8_t(in.range(1, 2));
    c.queues = uint16_t(in.range(1, 8));
    c.slices = uint16_t(in.range(1, c.queues));
    c.batch = uint16_t(in.range(1, 8));
    c.header_array = in.range(1, 96);
    c.min_payload = in.flag() ? 64 : in.range(0, 200);
    if (in.flag()) {
      std::array<uint8_t, 16> k;
      in.fill(k.data(), k.size());
      c.key = k;
    }
    return std::make_unique<QueueMemMode>(c);
  }
  park::SlicerConfig c;
  c.thr = in.flag() ? 500 : in.range(0, 600);
  c.slice_bytes = in.flag() ? 0 : in.range(1, 400);
  c.entries = in.range(1, 64);
  c.ttl = uint8_t(in.range(1, 3));
  c.cores = uint8_t(in.range(1, 2));
  in.fill(c.key.data(), c.key.size());
  return std::make_unique<SlicerMode>(c);
}

}  // namespace nfpark::fuzz
