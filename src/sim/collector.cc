#include "sim/collector.h"

#include <algorithm>
#include <numeric>

#include "core/flow_key.h"

namespace nfpark::sim {

Collector::Collector(uint16_t out_ports, bool ecmp, uint64_t reorder_cap, Picos interval)
    : ports_(out_ports), ecmp_(ecmp), cap_(reorder_cap), interval_(interval) {
  sent_flows_.reserve(std::min<uint64_t>(cap_, 1 << 20));
  received_.reserve(std::min<uint64_t>(cap_, 1 << 20));
  received_at_.reserve(std::min<uint64_t>(cap_, 1 << 20));
}

void Collector::on_input(Packet* p) {
  p->seq = next_seq_++;
  if (ecmp_) p->out_port = uint16_t(mix64(p->flow) % ports_);
  ++in_.packets;
  in_.bytes += p->len;
  if (in_window(p->t_in)) {
    ++in_.win_packets;
    in_.win_bytes += p->len;
    in_.wire_bytes += p->len + kWireOverhead;
  }
  if (p->seq < cap_) sent_flows_.push_back(p->flow);
}

OutBucket& Collector::find_bucket(Picos at) {
  const uint64_t b = uint64_t(at / interval_);
  while (first_bucket_ + buckets_.size() <= b) buckets_.emplace_back();
  cur_ = &buckets_[b - first_bucket_];
  cur_from_ = Picos(b) * interval_;
  cur_to_ = cur_from_ + interval_;
  return *cur_;
}

void Collector::arrive(Packet* p, Picos at, uint16_t) {
  ++out_.packets;
  out_.bytes += p->len;
  if (in_window(at)) {
    ++out_.win_packets;
    out_.win_bytes += p->len;
    out_.wire_bytes += p->len + kWireOverhead;
  }
  OutBucket& b = bucket(at);
  ++b.packets;
  b.bytes += p->len;
  note_latency(at - p->t_in, b);
  if (p->seq < cap_) {
    received_.push_back(p->seq);
    received_at_.push_back(at);
  }
  if (tap_) tap_(*p, at);
  p->pool()->free(p);
}

void Collector::flush() const {
  for (uint32_t i = 0; i < npend_; ++i) {
    latency_.add(pend_[i]);
    pend_bucket_->latency.add(pend_[i]);
  }
  npend_ = 0;
}

OutBucket Collector::take_bucket(uint64_t index) {
  flush();
  pend_bucket_ = nullptr;
  cur_ = nullptr;
  cur_from_ = cur_to_ = 0;
  OutBucket out;
  while (first_bucket_ < index && !buckets_.empty()) {  // skipped intervals: nothing to report
    buckets_.pop_front();
    ++first_bucket_;
  }
  if (first_bucket_ == index && !buckets_.empty()) {
    out = std::move(buckets_.front());
    buckets_.pop_front();
  }
  if (first_bucket_ <= index) first_bucket_ = index + 1;
  return out;
}

trace::ReorderStats Collector::reorder() const {
  // arrival order = order of arrival times (reports come per port in order, ports interleaved)
  std::vector<uint32_t> order(received_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return received_at_[a] < received_at_[b]; });
  std::vector<uint64_t> received(received_.size());
  for (size_t i = 0; i < order.size(); ++i) received[i] = received_[order[i]];
  std::vector<uint64_t> sent(sent_flows_.size());
  std::iota(sent.begin(), sent.end(), 0);
  trace::ReorderStats r = trace::compute_reorder(sent, received);
  trace::compute_flow_reorder(sent, sent_flows_, received, r);
  return r;
}

}  // namespace nfpark::sim
