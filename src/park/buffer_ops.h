// BufferOps: the few packet-buffer operations the parking logic needs from an engine.
//
// The split/merge rules live in src/park and never see an rte_mbuf; each engine supplies a
// traits class `B` with a `Handle` type (nullable, `B::null()`) and these static functions:
//
//   uint8_t* B::data(Handle)            first byte of the frame (headers are contiguous)
//   uint32_t B::head_len(Handle)        bytes contiguous at data() (first segment)
//   uint32_t B::pkt_len(Handle)         total frame bytes (all segments)
//   Handle   B::make_header(Handle orig, uint32_t hdr_len, uint32_t gap, uint32_t tail_off,
//                           uint32_t tail_len)
//            a new packet: orig[0, hdr_len) copied, then `gap` bytes for the tag, then
//            orig[tail_off, tail_off + tail_len) — by reference, not copied, where the engine can.
//            Returns B::null() if no buffer is available (the packet then goes whole).
//   uint8_t* B::open_gap(Handle, uint32_t at, uint32_t n)
//            inserts n bytes at offset `at` by moving the `at` bytes before it (headers, never
//            payload) into headroom; returns the gap or nullptr if there is no headroom.
//   void     B::close_gap(Handle, uint32_t at, uint32_t n)   removes n bytes at `at` likewise.
//   bool     B::replace_head(Handle dst, uint32_t old_len, const uint8_t* src, uint32_t new_len)
//            replaces dst[0, old_len) with src[0, new_len) (header rewrite at merge).
//   void     B::trim(Handle, uint32_t len)   truncates to `len` bytes.
//   void     B::free(Handle)
#pragma once
#include <concepts>
#include <cstdint>

namespace nfpark::park {

template <typename B>
concept BufferOps = requires(typename B::Handle h, const uint8_t* src, uint32_t n) {
  { B::null() } -> std::same_as<typename B::Handle>;
  { B::data(h) } -> std::same_as<uint8_t*>;
  { B::head_len(h) } -> std::same_as<uint32_t>;
  { B::pkt_len(h) } -> std::same_as<uint32_t>;
  { B::make_header(h, n, n, n, n) } -> std::same_as<typename B::Handle>;
  { B::open_gap(h, n, n) } -> std::same_as<uint8_t*>;
  B::close_gap(h, n, n);
  { B::replace_head(h, n, src, n) } -> std::same_as<bool>;
  B::trim(h, n);
  B::free(h);
};

}  // namespace nfpark::park
