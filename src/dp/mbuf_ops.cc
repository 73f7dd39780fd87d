#include "dp/mbuf_ops.h"

#include <rte_mbuf_dyn.h>

#include <cstring>

#include "core/bytes.h"

namespace nfpark::dp {

int MbufMeta::offset = -1;
int MbufMeta::ts_offset = -1;
int MbufMeta::cut_offset = -1;
int MbufMeta::server_offset = -1;

bool MbufMeta::register_meta() {
  static const rte_mbuf_dynfield desc = {"nfpark_seq", sizeof(uint64_t), alignof(uint64_t), 0};
  static const rte_mbuf_dynfield tsd = {"nfpark_ts", sizeof(int64_t), alignof(int64_t), 0};
  static const rte_mbuf_dynfield cutd = {"nfpark_cut", sizeof(uint32_t), alignof(uint32_t), 0};
  offset = rte_mbuf_dynfield_register(&desc);
  ts_offset = rte_mbuf_dynfield_register(&tsd);
  cut_offset = rte_mbuf_dynfield_register(&cutd);
  static const rte_mbuf_dynfield srvd = {"nfpark_srv", sizeof(uint32_t), alignof(uint32_t), 0};
  server_offset = rte_mbuf_dynfield_register(&srvd);
  return offset >= 0 && ts_offset >= 0 && cut_offset >= 0 && server_offset >= 0;
}

bool MbufOps::append_ref(Handle h, Handle orig, uint32_t off, uint32_t len) {
  rte_mbuf* last = rte_pktmbuf_lastseg(h);
  for (rte_mbuf* seg = orig; seg && len; seg = seg->next) {
    if (off >= seg->data_len) {
      off -= seg->data_len;
      continue;
    }
    uint32_t take = seg->data_len - off < len ? seg->data_len - off : len;
    rte_mbuf* mi = rte_pktmbuf_alloc(pools.indirect);
    if (!mi) return false;
    rte_pktmbuf_attach(mi, seg);  // refcount on the segment's buffer; payload stays in place
    mi->data_off = uint16_t(seg->data_off + off);
    mi->data_len = uint16_t(take);
    mi->pkt_len = take;
    mi->next = nullptr;
    mi->nb_segs = 1;
    last->next = mi;
    last = mi;
    h->nb_segs++;
    h->pkt_len += take;
    len -= take;
    off = 0;
  }
  return len == 0;
}

MbufOps::Handle MbufOps::make_header_segment(Handle orig, uint32_t hdr, uint32_t gap,
                                             uint32_t tail_off, uint32_t tail_len, Lent* lent) {
  if (hdr > orig->data_len) return nullptr;
  const bool lend = lent && can_lend(orig);
  rte_mbuf* h = rte_pktmbuf_alloc(pools.headers);
  if (!h) return nullptr;
  if (hdr + gap > rte_pktmbuf_tailroom(h)) {
    rte_pktmbuf_free(h);
    return nullptr;
  }
  h->data_len = uint16_t(hdr + gap);
  h->pkt_len = hdr + gap;
  move_bytes(data(h), data(orig), hdr);  // headers only: the one copy a split makes
  MbufMeta::copy(h, orig);
  h->port = orig->port;
  if (lend && tail_len && tail_off < orig->data_len && tail_off + tail_len == orig->data_len) {
    *lent = {orig->data_off, orig->data_len, Lent::kTail};
    rte_mbuf_refcnt_set(orig, 2);
    orig->data_off = uint16_t(orig->data_off + tail_off);
    orig->data_len = uint16_t(tail_len);
    orig->pkt_len = tail_len;
    h->next = orig;
    h->nb_segs = 2;
    h->pkt_len += tail_len;
    return h;
  }
  if (lent) *lent = Lent{};
  if (tail_len && !append_ref(h, orig, tail_off, tail_len)) {
    rte_pktmbuf_free(h);
    return nullptr;
  }
  return h;
}

bool MbufOps::reclaim(Handle orig, Lent& l, Handle returned) {
  if (l.kind == Lent::kNone) return true;
  rte_mbuf* prev = returned;
  while (prev && prev->next != orig) prev = prev->next;
  if (prev && returned != orig) {                       // still returned's tail: unchain it
    if (rte_mbuf_refcnt_read(orig) != 2) return false;  // the slot's and returned's, no other
    prev->next = nullptr;
    returned->nb_segs = uint16_t(returned->nb_segs - orig->nb_segs);
    returned->pkt_len -= orig->pkt_len;
    rte_mbuf_refcnt_set(orig, 1);  // both references were ours: no atomic needed
  } else if (rte_mbuf_refcnt_read(orig) != 1) {
    return false;  // lent to a header packet still in flight
  }
  if (orig->next) {  // something chained behind the lent tail on the way: not ours to send
    rte_pktmbuf_free(orig->next);
    orig->next = nullptr;
  }
  orig->nb_segs = 1;
  orig->data_off = l.data_off;
  orig->data_len = l.data_len;
  orig->pkt_len = l.data_len;
  l.kind = Lent::kNone;
  return true;
}

park::Rejoin MbufOps::rejoin_copy(Handle parked, uint32_t hdr_len, Lent& l, Handle returned,
                                  uint32_t at) {
  using park::Rejoin;
  if (!reclaim(parked, l, returned)) return Rejoin::kLent;
  const bool ok = replace_head(parked, hdr_len, data(returned), at);
  rte_pktmbuf_free(returned);
  return ok ? Rejoin::kOk : Rejoin::kNoRoom;
}

bool MbufOps::replace_head(Handle m, uint32_t old_len, const uint8_t* src, uint32_t new_len) {
  if (new_len > old_len) {
    if (!rte_pktmbuf_prepend(m, uint16_t(new_len - old_len))) return false;
  } else if (new_len < old_len) {
    rte_pktmbuf_adj(m, uint16_t(old_len - new_len));
  }
  std::memcpy(data(m), src, new_len);
  return true;
}

void MbufOps::trim(Handle m, uint32_t len) {
  if (len >= m->pkt_len) return;
  if (len <= m->data_len) {  // keep the first segment only
    if (m->next) rte_pktmbuf_free(m->next);
    m->next = nullptr;
    m->nb_segs = 1;
    m->data_len = uint16_t(len);
    m->pkt_len = len;
    return;
  }
  rte_pktmbuf_trim(m, uint16_t(m->pkt_len - len));  // only the last segment shrinks
}

}  // namespace nfpark::dp
