#include "dp/mbuf_ops.h"

#include <rte_mbuf_dyn.h>

#include <cstring>

namespace nfpark::dp {

int MbufMeta::offset = -1;
int MbufMeta::ts_offset = -1;

bool MbufMeta::register_meta() {
  static const rte_mbuf_dynfield desc = {"nfpark_seq", sizeof(uint64_t), alignof(uint64_t), 0};
  static const rte_mbuf_dynfield tsd = {"nfpark_ts", sizeof(int64_t), alignof(int64_t), 0};
  offset = rte_mbuf_dynfield_register(&desc);
  ts_offset = rte_mbuf_dynfield_register(&tsd);
  return offset >= 0 && ts_offset >= 0;
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

MbufOps::Handle MbufOps::make_header(Handle orig, uint32_t hdr, uint32_t gap, uint32_t tail_off,
                                     uint32_t tail_len) {
  rte_mbuf* h = rte_pktmbuf_alloc(pools.headers);
  if (!h) return nullptr;
  char* p = rte_pktmbuf_append(h, uint16_t(hdr + gap));
  if (!p || hdr > orig->data_len) {
    rte_pktmbuf_free(h);
    return nullptr;
  }
  std::memcpy(p, data(orig), hdr);  // headers only: the one copy a split makes
  MbufMeta::copy(h, orig);
  h->port = orig->port;
  if (tail_len && !append_ref(h, orig, tail_off, tail_len)) {
    rte_pktmbuf_free(h);
    return nullptr;
  }
  return h;
}

uint8_t* MbufOps::open_gap(Handle m, uint32_t at, uint32_t n) {
  if (at > m->data_len) return nullptr;
  char* p = rte_pktmbuf_prepend(m, uint16_t(n));
  if (!p) return nullptr;
  std::memmove(p, p + n, at);
  return reinterpret_cast<uint8_t*>(p) + at;
}

void MbufOps::close_gap(Handle m, uint32_t at, uint32_t n) {
  uint8_t* p = data(m);
  std::memmove(p + n, p, at);
  rte_pktmbuf_adj(m, uint16_t(n));
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
