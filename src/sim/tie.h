// Tie order: where an event stands among the events due at the same picosecond.
//
// Events run in (time, rank, index, sequence) order. The rank says what kind of device acts, the
// index which one of them (a port, a core), the sequence (the engine's scheduling counter) only
// orders one device's own events at one instant. So the order at an instant is canonical: a
// function of which devices act then, not of when their events happened to be scheduled; a
// device can tell where an effect it defers to an instant falls among the others by its rank
// alone (docs/sim.md §9, "Canonical tie order").
//
// The ranks, in the order they act at one instant, and why:
//  kAfc      delayed AFC commands (egress deparser, QUEUE-MEM §3.2) take effect first: a queue
//            paused or resumed at t is seen so by every decision made at t.
//  kPortMac  egress ports' MAC decisions: the frame on the wire completes, the next is dequeued
//            and its cells leave the buffer — releases before the instant's admissions.
//  kNfBox    the NF server's Reframer box hands what completed to the cores (same instant).
//  kNfCore   NF cores: a burst completes (survivors leave first), a core takes what has arrived.
//  kNfFault  delayed packets of `[faults]` leave after the instant's completed bursts.
//  kNfPoll   in-chain Reframer's poll of an idle core (a core's own event comes first).
//  kIngress  ingress pipeline passes (traffic frames, NF -> switch links, resubmit) in port order:
//            admissions see the buffer after the instant's releases.
//  kTimer    a switch program's timer pass (QUEUE-MEM's poll), after the instant's packet passes.
//  kSampler  measurement reads the state at the end of the instant.
// Rank 0 (kUnranked, an EventHandler's default) orders by scheduling only: unit tests' handlers.
#pragma once
#include <cassert>
#include <cstdint>

namespace nfpark::sim {

enum class Rank : uint8_t {
  kUnranked = 0,
  kAfc,
  kPortMac,
  kNfBox,
  kNfCore,
  kNfFault,
  kNfPoll,
  kIngress,
  kTimer,
  kSampler,
};

// An event's tie key below its time: rank (8 bits) | index (20 bits) | sequence (36 bits).
constexpr int kTieSeqBits = 36;
constexpr uint64_t kTieSeqMask = (uint64_t(1) << kTieSeqBits) - 1;
constexpr uint32_t kTieIndexLimit = 1u << 20;
constexpr uint64_t tie(Rank r, uint32_t index) {
  assert(index < kTieIndexLimit);
  return uint64_t(r) << 56 | uint64_t(index) << kTieSeqBits;
}

}  // namespace nfpark::sim
