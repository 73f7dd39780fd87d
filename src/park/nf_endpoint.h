// NfEndpoint: the NF server's side of parking. It finds the tag on a packet from the switch,
// tells the NF chain the packet's original length, and turns an NF's drop into PayloadPark's
// explicit-drop notification (the OP bit) so the switch frees the slot at once instead of waiting
// for EXP eviction.
//
// The NF server does not validate tags (it has no key): it only reads where the tag is and what
// it says. The switch validates everything that comes back. Whole packets in baseline mode carry
// no tag (`format` = nullopt). Behind an NFSlicer shim the packets carry NFSlicer's token
// instead (`slicer`): which ones is decided by the splice side's own rule (carries_token, in
// inspect_slice), never by DSCP; there is no drop notification (the NIC reclaims by TTL), so NF
// drops are freed here.
#pragma once
#include <optional>

#include "core/bytes.h"
#include "core/carried_layout.h"
#include "core/packet_view.h"
#include "park/buffer_ops.h"
#include "park/payload_park.h"
#include "park/slicer_token.h"
#include "park/tag.h"

namespace nfpark::park {

struct NfEndpointCounters {
  uint64_t header_only = 0;    // parked packets seen (headers + tag)
  uint64_t whole = 0;          // packets seen whole
  uint64_t drop_notified = 0;  // NF drops returned to the switch as explicit drops
  uint64_t drop_freed = 0;     // NF drops freed here (untagged, or notification disabled)
};

template <BufferOps B>
class NfEndpoint {
 public:
  using Handle = typename B::Handle;
  NfEndpoint(std::optional<TagFormat> format, bool notify_drops, bool slicer = false)
      : format_(slicer ? std::nullopt : format), notify_(notify_drops), slicer_(slicer) {}

  // Fills the NF's view of `h`. `tag_at` is set to the tag's offset, or 0 when untagged.
  // `parsed`: h's parse made by an earlier stage of this engine (in-chain Reframer), else none.
  void view(Handle h, PacketView& v, uint32_t& tag_at, const CarriedLayout* parsed = nullptr) {
    v.data = B::data(h);
    v.len = B::head_len(h);
    if (parsed)
      parsed->restore(v.len, v.layout);
    else
      parse_handle<B>(h, v.layout);  // in place (no copy of a result); carried if the engine can
    // Bytes the capture cut off (header-only traces) count as on the wire: meters see real sizes.
    const uint32_t cut = B::cut_len(h);
    v.wire_len = B::pkt_len(h) + cut;
    tag_at = 0;
    if (slicer_) {
      SliceInfo si = inspect_slice(v.data, v.len, B::pkt_len(h), v.layout);
      // A sliced packet's wire length is its IP length, which the capture did not cut.
      v.wire_len = si.wire_len + (si.mark == SliceMark::kSliced ? 0 : cut);
      tag_at = si.token_at;  // where the token is (fault injection may corrupt it)
      ++(si.mark == SliceMark::kSliced ? ctr_.header_only : ctr_.whole);
      return;
    }
    if (!format_ || !taggable(v.layout)) {
      ++ctr_.whole;
      return;
    }
    tag_at = v.layout.payload_off;
    const uint32_t tsz = *format_ == TagFormat::kNfpark ? 24 : 7;
    if (tag_at + tsz > v.len) {  // not a tag we can read: leave it to the switch to judge
      tag_at = 0;
      ++ctr_.whole;
      return;
    }
    const uint8_t* t = v.data + tag_at;
    const bool parked = *format_ == TagFormat::kNfpark ? (t[1] & 0x1) : (t[0] & 0x80);
    // An nfpark tag with nothing parked: a whole packet QUEUE-MEM queued behind its flow.
    const bool whole = !parked || (*format_ == TagFormat::kNfpark && load_be16(t + 14) == 0);
    if (whole) {
      v.wire_len -= tsz;  // whole packet with a tag inserted
      ++ctr_.whole;
    } else {
      // nfpark tags carry the original's length (the bytes the switch holds; add what the
      // capture cut); PayloadPark's does not, but the IP length fields are never rewritten on
      // a split, so the IP header still tells it.
      v.wire_len = *format_ == TagFormat::kNfpark ? load_be16(t + 12) + cut : v.layout.ip_end;
      ++ctr_.header_only;
    }
  }

  // True when no packet carries a tag or token (baseline, the NIC modes): a chain that reads no
  // parse (ViewNeed below kHeaders) may then take view_unparsed()'s views.
  bool untagged() const { return !format_ && !slicer_; }
  // view() for an untagged endpoint without the parse: data, len and wire_len; `layout` is left
  // as it is (the chain does not read it). Counted as view() counts a whole packet.
  void view_unparsed(Handle h, PacketView& v, uint32_t& tag_at) {
    fill_unparsed(h, v);
    tag_at = 0;
    ++ctr_.whole;
  }
  // view_unparsed() of a whole burst (no tag offsets: every packet's is 0).
  void view_unparsed(const Handle* hs, PacketView* vs, uint16_t n) {
    for (uint16_t i = 0; i < n; ++i) fill_unparsed(hs[i], vs[i]);
    ctr_.whole += n;
  }
  // An untagged packet's length on the wire: the bytes it holds and those its capture cut.
  static uint32_t wire_len(Handle h) { return B::pkt_len(h) + B::cut_len(h); }
  // `n` untagged packets a chain takes no view of (nf::Chain::counts_only()): counted as
  // view_unparsed() counts them.
  void count_unparsed(uint16_t n) { ctr_.whole += n; }

  // The NF chain dropped `h`. Returns the packet to send back (an explicit drop), or B::null()
  // after freeing it. NFSlicer has no drop notification: its ring reclaims by TTL.
  Handle on_drop(Handle h, uint32_t tag_at) {
    if (tag_at && notify_ && format_) {
      TagCodec::set_drop(B::data(h) + tag_at, *format_);
      B::trim(h, tag_at + (*format_ == TagFormat::kNfpark ? 24 : 7));
      ++ctr_.drop_notified;
      return h;
    }
    B::free(h);
    ++ctr_.drop_freed;
    return B::null();
  }

  const NfEndpointCounters& counters() const { return ctr_; }

 private:
  static void fill_unparsed(Handle h, PacketView& v) {
    v.data = B::data(h);
    v.len = B::head_len(h);
    v.wire_len = wire_len(h);
  }
  std::optional<TagFormat> format_;
  bool notify_;
  bool slicer_;
  NfEndpointCounters ctr_;
};

}  // namespace nfpark::park
