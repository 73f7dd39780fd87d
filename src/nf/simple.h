// Simple NFs: MacSwap, Forward and Busy — the papers' baseline and synthetic-cost NFs.
//
// Element:  MacSwap ("macswap") — swaps the Ethernet source and destination MACs (the NF of
//           PayloadPark's and NFSlicer's latency runs; DPDK testpmd's macswap mode).
// Element:  Forward ("forward") — passes every packet unchanged; the baseline of nf_bench ratios.
// Element:  Busy ("busy") — spins for `cycles` TSC cycles (__rdtsc) per packet, then passes it.
// Ports:    in[0] -> out[0]; none drops (Nf::may_drop() false: the engine skips verdicts).
// Config:   busy: cycles (TSC cycles per packet, default 300; PayloadPark's light/medium/heavy
//           NFs are 50/300/570).  macswap, forward: none.
// Time:     none (busy measures its own spin with the TSC, which is not a clock of the model).
// State:    none.
// Counters: packets (each), bytes (forward: sum of wire_len).
// Reads:    forward, busy: the lengths only; macswap: the Ethernet header — none needs the
//           parse, so the engine does not parse for them (Nf::reads(), park/nf_burst.h).
//           forward takes only a burst's sums (Nf::counts_only(): count_sums()), so a chain of
//           forwards gets no views at all.
// Cost:     macswap ~= forward (24 ns/pkt incl. parse); busy(300) 200 ns/pkt (rdtsc ~20 ns here).
// Refs:     PayloadPark (Goswami et al., NSDI'21) §6; NFSlicer; DPDK testpmd macswap.
#pragma once
#include <cstdint>

#include "nf/nf.h"

namespace nfpark::nf {

class MacSwap final : public Nf {
 public:
  std::string_view name() const override { return "macswap"; }
  bool rewrites_flow_key() const override { return false; }
  bool may_drop() const override { return false; }
  ViewNeed reads() const override { return ViewNeed::kEthernet; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void counters(const CounterSink& sink) const override { sink("packets", packets_); }

 private:
  uint64_t packets_ = 0;
};

class Forward final : public Nf {
 public:
  std::string_view name() const override { return "forward"; }
  bool rewrites_flow_key() const override { return false; }
  bool may_drop() const override { return false; }
  ViewNeed reads() const override { return ViewNeed::kLengths; }
  bool counts_only() const override { return true; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void count_sums(uint64_t packets, uint64_t wire_bytes, Nanos) override {
    packets_ += packets;
    bytes_ += wire_bytes;
  }
  void counters(const CounterSink& sink) const override {
    sink("packets", packets_);
    sink("bytes", bytes_);
  }

 private:
  uint64_t packets_ = 0, bytes_ = 0;
};

class Busy final : public Nf {
 public:
  explicit Busy(uint64_t cycles = 300) : cycles_(cycles) {}
  std::string_view name() const override { return "busy"; }
  bool rewrites_flow_key() const override { return false; }
  bool may_drop() const override { return false; }
  ViewNeed reads() const override { return ViewNeed::kLengths; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void counters(const CounterSink& sink) const override { sink("packets", packets_); }
  uint64_t cycles() const { return cycles_; }

 private:
  uint64_t cycles_;
  uint64_t packets_ = 0;
};

}  // namespace nfpark::nf
