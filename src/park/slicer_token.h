// SlicerToken: NFSlicer's 64-bit token, its DSCP mark, and the host side's view of both.
//
// Token (8 bytes, big-endian, placed right after the L4 header — where the sliced payload began):
//
//    63        56 55                      log2N  log2N-1        0
//   +-----------+----------------------------+-----------------+
//   |  core (8) |  generation (56 - log2N)   |   index (log2N) |
//   +-----------+----------------------------+-----------------+
//
//  - index: the ring entry (the paper's "lowest-order log2 N bits"; N is a power of two).
//  - generation: the paper's "remaining bits", less the 8 core bits nfpark takes so a returning
//    header finds its per-core table without symmetric RSS (a NAT changes the 5-tuple). With
//    N <= 2^24 the generation keeps >= 32 bits.
//  - core 255 is reserved: the *escape token* kEscapeToken, which no ring ever issues. It is
//    put in front of the L4 payload of a whole packet that could otherwise be read as carrying
//    a token (carries_token below) or that arrived with DSCP 63, so the splice side strips it
//    and forwards the packet instead of mistaking it for a sliced one.
//  - generation: P_k(per-core insert counter), P a keyed permutation (keyed_perm.h) under a key
//    drawn from the run's secret and the core: unique per core for 2^bits inserts, and not
//    predictable by anyone who lacks the secret, whatever tokens they saw.
//
// Where the token goes: the paper says the NIC "appends" the token and gives no offset; with the
// whole payload sliced, the end of the truncated packet is the byte after the L4 header, so
// nfpark puts it there in every case (also with partial slicing, where the unsliced tail follows
// the token), as PayloadPark does with its tag. It is then always in the first segment.
//
// DSCP: the mark is DSCP 63 (0b111111, "experimental/local use", RFC 2474). Only the six DSCP
// bits change; the two ECN bits are kept (RFC 3168), so CE set by the host survives the splice.
// The IPv4 header checksum is patched incrementally (RFC 1624); IPv6 has no header checksum and
// TOS/traffic class is not in any L4 pseudo-header.
#pragma once
#include <cstdint>

#include "core/parse.h"
#include "park/keyed_perm.h"

namespace nfpark::park {

constexpr uint8_t kSliceDscp = 63;
constexpr uint32_t kTokenBytes = 8;
constexpr uint32_t kTokenCoreBits = 8;
constexpr uint32_t kMaxSlicerCores = 255;  // core ids 0..254; 255 is the escape token's
constexpr uint32_t kMaxIndexBits = 24;     // N <= 16 Mi entries per core
constexpr uint64_t kEscapeToken = 0xFF4E465345534350ull;  // 0xFF "NFSESCP"

class TokenLayout {
 public:
  explicit TokenLayout(uint32_t index_bits) : index_bits_(index_bits) {}
  uint32_t index_bits() const { return index_bits_; }
  uint32_t generation_bits() const { return 64 - kTokenCoreBits - index_bits_; }
  uint64_t generation_mask() const { return (uint64_t(1) << generation_bits()) - 1; }
  uint64_t make(uint8_t core, uint64_t generation, uint32_t index) const {
    return uint64_t(core) << (64 - kTokenCoreBits) |
           (generation & generation_mask()) << index_bits_ | index;
  }
  static uint8_t core(uint64_t t) { return uint8_t(t >> (64 - kTokenCoreBits)); }
  uint64_t generation(uint64_t t) const { return (t >> index_bits_) & generation_mask(); }
  uint32_t index(uint64_t t) const { return uint32_t(t & ((uint64_t(1) << index_bits_) - 1)); }

 private:
  uint32_t index_bits_;
};

// Which packets carry a token after their L4 header on the way back from the host: a sliced
// header packet (ring token) or an escaped whole packet (kEscapeToken). Decided only from what
// the slicer itself controls, never from the DSCP (an NF may re-mark it, and wire traffic may
// carry any): an unfragmented IPv4/IPv6 TCP/UDP packet with 8 bytes after its L4 header in its
// first segment (`head` bytes), that is either shorter than its IP header says (`pkt_len` <
// ip_end: every sliced header packet is, by construction) or starts its L4 payload with the
// escape token. split() escapes every packet it sends whole for which this holds — truncated
// captures, crafted lengths, payloads that begin like an escape — so nothing it did not slice
// or escape ever satisfies it, and an attacker's bytes are never read as a token.
inline bool token_eligible(const PacketLayout& L) {
  return L.ok() && L.ip_version != 0 && L.has_ports() && !L.fragment;
}
bool carries_token(const uint8_t* pkt, uint32_t head, uint32_t pkt_len, const PacketLayout& L);

// DSCP of an IP packet (layout.ip_version 4 or 6, header present).
uint8_t read_dscp(const uint8_t* pkt, const PacketLayout& L);
// Sets the DSCP, keeps ECN, patches the IPv4 header checksum (RFC 1624 eqn. 3).
void write_dscp(uint8_t* pkt, const PacketLayout& L, uint8_t dscp);

// What the NF server sees on a packet from the slicer (the analogue of NfEndpoint::view).
enum class SliceMark : uint8_t { kPlain, kSliced, kEscaped };
struct SliceInfo {
  SliceMark mark = SliceMark::kPlain;
  uint32_t token_at = 0;  // offset of the token, 0 when plain
  uint32_t wire_len = 0;  // the frame's length on the wire (what meters should count)
};
// `len`: contiguous bytes at pkt; `pkt_len`: the whole buffer. The same rule as the splice side
// (carries_token), so the NF server and the slicer never disagree. A sliced packet's IP length
// fields are never rewritten, so wire_len = ip_end (Ethernet trailer bytes are not counted);
// an escaped packet is 8 bytes longer than on the wire.
SliceInfo inspect_slice(const uint8_t* pkt, uint32_t len, uint32_t pkt_len, const PacketLayout& L);

}  // namespace nfpark::park
