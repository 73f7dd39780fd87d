// Element:  ServerChoice — which of M NF servers a packet goes to, and whether each server is
//           alive (a switch with M NF ports; the dataplane and the simulator use this one rule).
// Ports:    pick(packet) -> server · sent(server, now) · heard(server, now) -> accept? ·
//           tick(now, on_change) (a server went down or was taken back)
// Config:   servers M (1..kMaxServers) · spread (five_tuple | src_ip | symmetric; default
//           five_tuple) · dead_after (ns; 0: servers never die — in-process servers)
// Time:     passed in (`now`, the engine's clock; wall time for servers in other processes).
// State:    per server: live or down, when the oldest send it has not answered since it last
//           answered was made, when it went down, the next trial, failed trials.
// Counters: per server: downs (declared dead), takebacks (taken back), late (packets heard
//           while down: dropped by the engine, they belong to before the server went down).
// Refs:     PayloadPark §4.3 (one memory slice per NF server), QUEUE-MEM §3.2 (queues sliced
//           per server); the server choice and liveness are nfpark's (the papers do not say
//           how a switch spreads flows over servers or notices one failing).
//
// Theory of operation
//  Spread. A packet with an IP header is hashed by the chosen key: its 5-tuple (direction
//  matters), its source address only (all of a host's flows on one server), or its 5-tuple
//  symmetrically (both directions of a connection on one server, for stateful NFs that see
//  both). The hash names a home server h % M. Packets without an IP header (ARP, ...) have
//  server 0 as home. A packet goes to its home server while that is live; when it is down, to
//  the live server picked by the upper hash bits among the live ones — so the flows of a live
//  server never move, and those of a down server spread over the others. With none live, the
//  home server is used (nothing else could take it).
//  Liveness ("silence while something is outstanding"). Every send to a live server that has
//  answered everything so far starts a clock (`waiting_since`); anything heard from it stops
//  it. A server that has been sent something and answered nothing for dead_after is down: the
//  engine reclaims its slots (PayloadPark: its slice is emptied; QUEUE-MEM: its batches are
//  released, missing headers lost) and its flows go to the live servers. A down server gets no
//  traffic. After a back-off (dead_after, doubling with each failed trial up to 16 x) it is
//  taken back on trial: its flows return to it; if it answers it stays, if not it goes down
//  again after dead_after. A server heard from while down (a slow one that answers late) is
//  taken back at once. What it sends while down is stale (its slots were reclaimed): the engine
//  drops it (counted `late`).
//  Limits: an NF chain that drops everything it gets for dead_after looks dead (its "answers"
//  never come); a flow that moves between servers (a server goes down, or is taken back) may
//  see its packets still in flight at the old server leave after its newer ones at the new one
//  (taken back) or be lost (gone down) — as on any real failover.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/flow_key.h"
#include "core/parse.h"
#include "core/time.h"

namespace nfpark::park {

enum class Spread : uint8_t { kFiveTuple, kSrcIp, kSymmetric };
std::optional<Spread> parse_spread(std::string_view s);
std::string_view to_string(Spread s);

struct ServerState {
  bool live = true;
  Nanos waiting_since = -1;  // first send not answered since the last answer (-1: none)
  Nanos down_at = 0;         // when it went down
  Nanos trial_at = 0;        // when a down server is taken back on trial
  uint32_t failed_trials = 0;
  uint64_t downs = 0, takebacks = 0, late = 0;
};

class ServerChoice {
 public:
  static constexpr uint32_t kMaxServers = 16;

  ServerChoice(uint32_t servers, Spread spread, Nanos dead_after)
      : m_(servers < 1             ? 1
           : servers > kMaxServers ? kMaxServers
                                   : servers),
        spread_(spread),
        dead_after_(dead_after),
        live_n_(m_) {}

  uint32_t servers() const { return m_; }
  Spread spread() const { return spread_; }
  const ServerState& state(uint32_t k) const { return st_[k]; }
  bool live(uint32_t k) const { return st_[k].live; }

  // The hash a packet is spread by; false for packets without a usable IP header.
  static bool flow_hash(const uint8_t* d, uint32_t len, Spread s, uint64_t& h) {
    const PacketLayout L = parse_packet(d, len);
    FlowKey k;
    if (L.ip_version == 0 || !extract_flow_key(d, L, k)) return false;
    switch (s) {
      case Spread::kFiveTuple:
        h = k.hash();
        return true;
      case Spread::kSrcIp:
        h = hash_bytes(k.src.data(), k.src.size(), k.ip_version);
        return true;
      case Spread::kSymmetric:
        h = k.symmetric_hash();
        return true;
    }
    return false;
  }

  // The server for a packet whose spread hash is `h` (see "Spread").
  uint32_t pick_hash(uint64_t h) const {
    const uint32_t home = uint32_t(h % m_);
    if (st_[home].live || live_n_ == 0) return home;
    uint32_t n = uint32_t((h >> 32) % live_n_);
    for (uint32_t k = 0; k < m_; ++k)
      if (st_[k].live && n-- == 0) return k;
    return home;
  }
  // The server for the packet `d` (`len` bytes readable).
  uint32_t pick(const uint8_t* d, uint32_t len) const {
    if (m_ == 1) return 0;
    uint64_t h = 0;
    return flow_hash(d, len, spread_, h) ? pick_hash(h) : pick_hash(0);
  }

  // Server k was sent something at `now`.
  void sent(uint32_t k, Nanos now) {
    if (st_[k].waiting_since < 0) st_[k].waiting_since = now;
  }
  // Server k sent something back at `now`. True: accept it; false: k is down and what it sent
  // is stale (drop it, counted in `late`); k is taken back at the next tick().
  bool heard(uint32_t k, Nanos now) {
    ServerState& s = st_[k];
    s.waiting_since = -1;
    if (s.live) {
      s.failed_trials = 0;
      return true;
    }
    ++s.late;
    s.trial_at = now;  // it answers: take it back now
    return false;
  }

  // Liveness at `now`: calls on_change(k, live) for each server that went down or was taken
  // back. Down first: the engine reclaims its slots before any other packet moves.
  template <typename F>
  void tick(Nanos now, F&& on_change) {
    if (dead_after_ <= 0) return;
    for (uint32_t k = 0; k < m_; ++k) {
      ServerState& s = st_[k];
      if (s.live && s.waiting_since >= 0 && now - s.waiting_since >= dead_after_) {
        s.live = false;
        --live_n_;
        ++s.downs;
        s.down_at = now;
        s.waiting_since = -1;
        const uint32_t shift = s.failed_trials < 4 ? s.failed_trials : 4;
        s.trial_at = now + (dead_after_ << shift);
        ++s.failed_trials;  // reset when it answers
        on_change(k, false);
      } else if (!s.live && now >= s.trial_at) {
        s.live = true;
        ++live_n_;
        ++s.takebacks;
        s.waiting_since = -1;
        on_change(k, true);
      }
    }
  }

 private:
  uint32_t m_;
  Spread spread_;
  Nanos dead_after_;
  uint32_t live_n_;
  std::array<ServerState, kMaxServers> st_{};
};

}  // namespace nfpark::park
