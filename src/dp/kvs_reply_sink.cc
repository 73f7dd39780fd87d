#include "dp/kvs_reply_sink.h"

#include <cstring>

namespace nfpark::dp {

ShinfoPool::ShinfoPool(uint32_t n, kvs::RefReleaser* releaser) : slots_(n), releaser_(releaser) {
  for (uint32_t i = 0; i < n; ++i) slots_[i].next = i + 1;
}

rte_mbuf_ext_shared_info* ShinfoPool::get(kvs::HotRef ref) {
  if (free_ >= slots_.size()) return nullptr;
  Slot& s = slots_[free_];
  free_ = s.next;
  ++in_use_;
  s.ref = ref;
  s.pool = this;
  s.info.free_cb = &ShinfoPool::on_free;
  s.info.fcb_opaque = &s;
  rte_mbuf_ext_refcnt_set(&s.info, 1);
  return &s.info;
}

void ShinfoPool::on_free(void*, void* opaque) {
  // Every segment that pointed at the stable buffer is gone (sent, or freed unsent).
  Slot* s = static_cast<Slot*>(opaque);
  ShinfoPool* pool = s->pool;
  pool->releaser_->release(s->ref);
  s->next = pool->free_;
  pool->free_ = uint32_t(s - pool->slots_.data());
  --pool->in_use_;
}

MbufReplySink::MbufReplySink(KvsPools pools, const kvs::Endpoint& ep, ShinfoPool& shinfo,
                             kvs::RefReleaser* releaser, const uint8_t* region,
                             rte_iova_t region_iova, bool zero_copy)
    : pools_(pools),
      ep_(ep),
      shinfo_(shinfo),
      releaser_(releaser),
      region_(region),
      region_iova_(region_iova),
      zero_copy_(zero_copy) {
  out.reserve(1024);
}

rte_mbuf_ext_shared_info* MbufReplySink::shinfo_for(kvs::HotRef ref) {
  if (open_info_ && open_ref_.slot == ref.slot && open_ref_.gen == ref.gen) return open_info_;
  if (open_info_) return nullptr;  // one hot value per response: never expected
  open_info_ = shinfo_.get(ref);
  if (open_info_) open_ref_ = ref;
  return open_info_;
}

bool MbufReplySink::attach(rte_mbuf* head, rte_mbuf*& tail, const kvs::Slice& s) {
  rte_mbuf_ext_shared_info* info = shinfo_for(s.ref);
  if (!info) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(pools_.ext);
  if (!m) return false;
  rte_mbuf_ext_refcnt_update(info, 1);
  const rte_iova_t iova =
      region_iova_ == RTE_BAD_IOVA ? RTE_BAD_IOVA : region_iova_ + rte_iova_t(s.data - region_);
  rte_pktmbuf_attach_extbuf(m, const_cast<uint8_t*>(s.data), iova, uint16_t(s.len), info);
  m->data_len = uint16_t(s.len);
  tail->next = m;
  tail = m;
  head->nb_segs++;
  head->pkt_len += s.len;
  return true;
}

void MbufReplySink::datagram(const uint8_t (&frame)[kvs::kUdpFrameHeader], const kvs::Slice* s,
                             uint32_t n, uint32_t bytes) {
  rte_mbuf* head = rte_pktmbuf_alloc(pools_.frames);
  if (!head) {
    ++c_.no_mbuf;
    return;
  }
  uint8_t* p = rte_pktmbuf_mtod(head, uint8_t*);
  ep_.reply_headers(p, peer_, kvs::kUdpFrameHeader + bytes, ip_id_++);
  std::memcpy(p + kvs::kReplyHeaders, frame, kvs::kUdpFrameHeader);
  head->data_len = uint16_t(kvs::kReplyHeaders + kvs::kUdpFrameHeader);
  head->pkt_len = head->data_len;
  rte_mbuf* tail = head;
  bool zc = false;
  for (uint32_t i = 0; i < n; ++i) {
    if (s[i].kind == kvs::Slice::kHot && zero_copy_ && attach(head, tail, s[i])) {
      c_.bytes_zero_copy += s[i].len;
      zc = true;
      continue;
    }
    if (s[i].kind == kvs::Slice::kHot) ++c_.zc_fallbacks;
    if (RTE_MBUF_HAS_EXTBUF(tail) || rte_pktmbuf_tailroom(tail) < s[i].len) {
      rte_mbuf* m = rte_pktmbuf_alloc(pools_.frames);
      if (!m) {
        rte_pktmbuf_free(head);
        ++c_.no_mbuf;
        return;
      }
      tail->next = m;
      tail = m;
      head->nb_segs++;
    }
    std::memcpy(rte_pktmbuf_mtod_offset(tail, uint8_t*, tail->data_len), s[i].data, s[i].len);
    tail->data_len = uint16_t(tail->data_len + s[i].len);
    head->pkt_len += s[i].len;
    (s[i].kind == kvs::Slice::kText ? c_.text_bytes : c_.bytes_copied) += s[i].len;
  }
  ++c_.datagrams;
  c_.zero_copy_datagrams += zc;
  out.push_back(head);
}

void MbufReplySink::take_ref(kvs::HotRef ref) {
  if (open_info_ && open_ref_.slot == ref.slot && open_ref_.gen == ref.gen) {
    // Drop the builder's reference: the last segment's free (or this, if none is left)
    // returns the HotRef through ShinfoPool::on_free.
    if (rte_mbuf_ext_refcnt_update(open_info_, -1) == 0)
      open_info_->free_cb(nullptr, open_info_->fcb_opaque);
    open_info_ = nullptr;
    return;
  }
  releaser_->release(ref);  // everything was copied
}

}  // namespace nfpark::dp
