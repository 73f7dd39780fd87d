// Lpm: longest-prefix match over IPv4 (4-byte) or IPv6 (16-byte) keys — a multibit trie with a
// 16-bit first stride and 8-bit strides below (DIR-16-8-8 for IPv4, 16-8-...-8 for IPv6), built
// by controlled prefix expansion (Srinivasan & Varghese 1999, as in DPDK's rte_lpm/rte_lpm6).
//
// Theory of operation. The root has 2^16 entries, each child group 2^8. An entry is a 32-bit word:
// valid bit, "extended" bit (the value is a child group index), the length of the prefix that
// wrote it (0..128) and a 22-bit value. Inserting a prefix of length `len` writes every entry it
// covers at the level where `len` ends, except entries already written by a longer prefix; an
// entry that must be refined further becomes a child group initialised with its old contents.
// The result is independent of insertion order; equal prefixes: the last insert wins.
// Lookup: one load per stride until a non-extended entry — 1..3 loads for IPv4, ≤ 15 for IPv6.
// Memory: 256 KiB root + 1 KiB per child group. No deletion (routes are static config).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nfpark::nf {

class Lpm {
 public:
  static constexpr uint32_t kNoRoute = ~0u;
  static constexpr uint32_t kMaxValue = (1u << 22) - 1;

  explicit Lpm(int key_bytes);  // 4 or 16
  // Inserts prefix (network order, `key_bytes` long, bits past len ignored). False if value is
  // above kMaxValue or len is out of range.
  bool insert(const uint8_t* prefix, int len, uint32_t value);
  uint32_t lookup(const uint8_t* key) const {
    uint32_t e = root_[uint32_t(key[0]) << 8 | key[1]];
    int pos = 2;
    while (e & kExt) e = groups_[size_t(e & kValMask) << 8 | key[pos++]];
    return (e & kValid) ? (e & kValMask) : kNoRoute;
  }
  int key_bytes() const { return key_bytes_; }
  size_t groups() const { return groups_.size() / 256; }
  size_t memory_bytes() const { return (root_.size() + groups_.size()) * sizeof(uint32_t); }

 private:
  static constexpr uint32_t kValid = 1u << 31, kExt = 1u << 30, kValMask = kMaxValue;
  static uint32_t depth(uint32_t e) { return (e >> 22) & 0xFF; }
  // Writes `entry` over [first, first + n) of the table starting at `base` (root if base < 0,
  // else child group `base`), descending into child groups.
  void fill(int64_t base, uint32_t first, uint32_t n, uint32_t entry, int len);
  uint32_t& at(int64_t base, uint32_t i) {
    return base < 0 ? root_[i] : groups_[size_t(base) << 8 | i];
  }

  int key_bytes_;
  std::vector<uint32_t> root_;
  std::vector<uint32_t> groups_;
};

}  // namespace nfpark::nf
