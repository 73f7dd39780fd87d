// MacSides: which side of a two-port bump in the wire an Ethernet address was last seen on, so
// a frame whose ingress port is lost (it came back from an NF server in another process, where
// only the frame travels) can still leave on the right side: away from where its source was
// seen, else towards where its destination was seen.
//
// Parameters: kEntries (4096) direct-mapped entries, keyed by the full 6-byte address (a
// collision overwrites: the older address is forgotten and learned again from its next frame).
// No allocation, no locks: one instance per switch loop. Knows nothing of DPDK.
// Counters: none (the caller counts unknown() answers).
#pragma once
#include <array>
#include <cstdint>
#include <cstring>

namespace nfpark {

class MacSides {
 public:
  static constexpr int kUnknown = -1;
  static constexpr uint32_t kEntries = 4096;

  // Records that the frame starting at `eth` (at least 12 bytes) entered on `side` (0 or 1).
  void learn(const uint8_t* eth, int side) {
    const uint8_t* src = eth + 6;
    if (src[0] & 1) return;  // a multicast source is not an address anyone sends to
    Entry& e = table_[slot(src)];
    std::memcpy(e.mac, src, 6);
    e.side = int8_t(side);
  }
  // The side the frame starting at `eth` leaves on, or kUnknown when neither address is known.
  int egress(const uint8_t* eth) const {
    if (const int s = side_of(eth + 6); s != kUnknown) return 1 - s;
    return side_of(eth);
  }
  int side_of(const uint8_t* mac) const {
    const Entry& e = table_[slot(mac)];
    return e.side != kUnknown && std::memcmp(e.mac, mac, 6) == 0 ? e.side : kUnknown;
  }

 private:
  struct Entry {
    uint8_t mac[6] = {};
    int8_t side = kUnknown;
  };
  static uint32_t slot(const uint8_t* mac) {
    uint32_t h = 2166136261u;  // FNV-1a over the address
    for (int i = 0; i < 6; ++i) h = (h ^ mac[i]) * 16777619u;
    return h % kEntries;
  }
  std::array<Entry, kEntries> table_{};
};

}  // namespace nfpark
