// BufferOps: the few packet-buffer operations the parking logic needs from an engine.
//
// The split/merge rules live in src/park and never see an rte_mbuf; each engine supplies a
// traits class `B` with a `Handle` type (nullable, `B::null()`) and these static functions:
//
//   uint8_t* B::data(Handle)            first byte of the frame (headers are contiguous)
//   uint32_t B::head_len(Handle)        bytes contiguous at data() (first segment)
//   uint32_t B::pkt_len(Handle)         total frame bytes (all segments)
//   uint32_t B::cut_len(Handle)         bytes of the frame on the wire that the buffer does not
//                                       hold because the capture cut them off (snaplen); 0 for a
//                                       whole frame. The wire length is pkt_len + cut_len for an
//                                       unsplit frame. A header packet made by make_header
//                                       carries its original's; it never changes with headers.
//   B::Lent                             what the engine remembers about an original it lent
//            (small, trivially copyable, value-initialised = "not lent"). The park layer keeps
//            one beside each parked handle — in the slot it touches anyway, so lending costs no
//            extra cache line per packet.
//   Handle   B::make_header(Handle orig, uint32_t hdr_len, uint32_t gap, uint32_t tail_off,
//                           uint32_t tail_len, B::Lent* lent)
//            a header packet: orig[0, hdr_len), then `gap` bytes for the tag, then
//            orig[tail_off, tail_off + tail_len) — by reference, never copied. Returns B::null()
//            if no buffer is available (the packet then goes whole). With `lent` non-null the
//            engine may lend `orig` itself — as the header packet (cut down to headers + gap, the
//            payload kept past its end) or as its tail segment — and records how in *lent; with
//            nullptr it never lends. A lent `orig` must not leave or be rewritten before
//            B::rejoin; freeing it is always safe.
//   uint8_t* B::open_gap(Handle, uint32_t at, uint32_t n)
//            inserts n bytes at offset `at` by moving the `at` bytes before it (headers, never
//            payload) into headroom; returns the gap or nullptr if there is no headroom.
//   void     B::close_gap(Handle, uint32_t at, uint32_t n)   removes n bytes at `at` likewise.
//   Rejoin   B::rejoin(Handle parked, uint32_t hdr_len, B::Lent& lent, Handle returned,
//                      uint32_t at)
//            the merge (`lent` as make_header left it): parked[0, hdr_len) (its original headers)
//            becomes returned[0, at) (the headers the NF sent back) and `returned` is consumed — it
//            may be `parked` itself or carry it, when make_header lent it. kOk: `parked` is the
//            merged packet. kLent: `parked` is lent to another packet still in flight (a duplicate
//            came back first); nothing changed, `returned` is the caller's. kNoRoom: the headers do
//            not fit; `returned` consumed, `parked` the caller's.
//   bool     B::carries(Handle returned, Handle parked)
//            true if `returned` physically holds `parked` (lent in place or as its tail): then it
//            is the header packet made from `parked`, and its tag ends its first segment.
//   void     B::trim(Handle, uint32_t len)   truncates to `len` bytes.
//   void     B::free(Handle)
//
// Optional — parse once, carry (an engine whose handles can keep a parse beside the bytes; the
// dataplane's mbufs do not, the simulator's records do):
//   bool     B::take_layout(Handle, PacketLayout& out)
//            true and `out` = what parse_packet(data, head_len) would give, if the handle carries
//            a parse; it then carries none (the taker may rewrite the bytes).
//   void     B::carry_layout(Handle, const PacketLayout& L)
//            the handle's bytes parse to L (with captured = head_len) until the next change to
//            them: every operation above that changes bytes or lengths forgets it.
//   bool     B::take_flow_hash(Handle, uint64_t& out)
//            true and `out` = FlowKey::hash() of extract_flow_key(bytes, their parse), if the
//            handle carries it (a source that knows its flows); it then carries none. Only with
//            the parse take_layout would give: call it first (taking the layout forgets it).
// parse_handle(), carry_layout() and take_flow_hash() below use them when B has them (and parse
// or hash otherwise).
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "core/parse.h"

namespace nfpark::park {

enum class Rejoin : uint8_t { kOk, kLent, kNoRoom };

template <typename B>
concept BufferOps = std::is_trivially_copyable_v<typename B::Lent> &&
    requires(typename B::Handle h, uint32_t n, typename B::Lent l) {
  { B::null() } -> std::same_as<typename B::Handle>;
  { B::data(h) } -> std::same_as<uint8_t*>;
  { B::head_len(h) } -> std::same_as<uint32_t>;
  { B::pkt_len(h) } -> std::same_as<uint32_t>;
  { B::cut_len(h) } -> std::same_as<uint32_t>;
  { B::make_header(h, n, n, n, n, &l) } -> std::same_as<typename B::Handle>;
  { B::open_gap(h, n, n) } -> std::same_as<uint8_t*>;
  B::close_gap(h, n, n);
  { B::rejoin(h, n, l, h, n) } -> std::same_as<Rejoin>;
  { B::carries(h, h) } -> std::same_as<bool>;
  B::trim(h, n);
  B::free(h);
};

template <typename B>
concept CarriesLayout = requires(typename B::Handle h, PacketLayout& out, const PacketLayout& L) {
  { B::take_layout(h, out) } -> std::same_as<bool>;
  B::carry_layout(h, L);
};

template <typename B>
concept CarriesFlowHash = requires(typename B::Handle h, uint64_t& out) {
  { B::take_flow_hash(h, out) } -> std::same_as<bool>;
};

// The parse of h's bytes: the one it carries, else parse_packet's.
template <BufferOps B>
inline void parse_handle(typename B::Handle h, PacketLayout& out) {
  if constexpr (CarriesLayout<B>)
    if (B::take_layout(h, out)) return;
  parse_packet(B::data(h), B::head_len(h), out);
}
// h's bytes parse to L (the caller made them so): the next stage need not parse them.
template <BufferOps B>
inline void carry_layout(typename B::Handle h, const PacketLayout& L) {
  if constexpr (CarriesLayout<B>) B::carry_layout(h, L);
}

// The flow-key hash h carries (false: none; the caller extracts and hashes the key). Before
// parse_handle(h): taking the parse forgets the hash.
template <BufferOps B>
inline bool take_flow_hash(typename B::Handle h, uint64_t& out) {
  if constexpr (CarriesFlowHash<B>) {
    return B::take_flow_hash(h, out);
  } else {
    (void)h, (void)out;
    return false;
  }
}

}  // namespace nfpark::park
