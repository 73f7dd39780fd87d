#include "dp/reframe_box.h"

#include <rte_pause.h>

#include <array>

#include "core/time.h"

namespace nfpark::dp {

uint16_t BoxLane::take(rte_mbuf** pkts, uint16_t n) {
  uint16_t got =
      uint16_t(rte_ring_sc_dequeue_burst(ring, reinterpret_cast<void**>(pkts), n, nullptr));
  if (got < n && box_done->load(std::memory_order_acquire)) {
    while (got < n && out_at < out.size()) pkts[got++] = out[out_at++];
    if (out_at == out.size()) out.clear(), out_at = 0;
  }
  return got;
}

bool BoxLane::push_out() {
  if (out_at < out.size()) {
    out_at += rte_ring_sp_enqueue_burst(ring, reinterpret_cast<void* const*>(out.data() + out_at),
                                        unsigned(out.size() - out_at), nullptr);
  }
  if (out_at < out.size()) return false;
  out.clear();
  out_at = 0;
  return true;
}

ReframeBox::~ReframeBox() {
  for (auto& l : lanes)
    if (l->ring) rte_ring_free(l->ring);
}

bool ReframeBox::add_lane(std::unique_ptr<park::ReframeStage<MbufOps>> stage, bool trace_time,
                          Port* in, std::string& err) {
  auto l = std::make_unique<BoxLane>();
  // Room for everything Reframer may release at once, plus a ring's worth in flight.
  const size_t want = stage->reserve_hint() + 4096;
  unsigned size = 1;
  while (size < want) size <<= 1;
  const std::string ring_name = name + std::to_string(lanes.size());
  l->ring = rte_ring_create(ring_name.c_str(), size, int(rte_socket_id()),
                            RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  if (!l->ring) return (err = "cannot create the Reframer box's ring " + ring_name), false;
  l->out.reserve(stage->reserve_hint());
  l->stage = std::move(stage);
  l->clock.use_trace_time(trace_time);
  l->in = in;
  l->box_done = &done;
  lanes.push_back(std::move(l));
  return true;
}

bool ReframeBox::idle() const {
  const uint64_t e1 = epoch.load();
  const bool b1 = busy.load();
  bool empty = waiting.load() == 0;
  for (const auto& l : lanes) empty = empty && l->in->rx_pending() == 0 && rte_ring_empty(l->ring);
  const bool b2 = busy.load();
  const uint64_t e2 = epoch.load();
  return !b1 && !b2 && e1 == e2 && empty;
}

void ReframeBox::request_flush() {
  if (done.load()) return;
  flush_req.store(true);
  SteadyClock clock;
  const Nanos until = clock.now() + 200 * kMilli;  // a stuck box cannot hold the run up
  while (flush_req.load() && clock.now() < until) rte_pause();
}

namespace {
int64_t ts_of(rte_mbuf* m) {
  return MbufMeta::ts(m);
}
}  // namespace

int reframe_box_main(void* arg) {
  auto* b = static_cast<ReframeBox*>(arg);
  SteadyClock clock;
  std::array<rte_mbuf*, kBurst> pkts;
  while (!b->stop.load(std::memory_order_relaxed)) {
    const Nanos t0 = clock.now();
    b->busy.store(true);
    b->epoch.fetch_add(1);
    if (b->flush_req.load()) {
      for (auto& l : b->lanes) {
        l->stage->flush(l->clock.flush_time(clock.now()), l->out);
        l->push_out();
      }
      b->flush_req.store(false);
    }
    uint32_t moved = 0;
    uint64_t held = 0, waiting = 0;
    for (auto& l : b->lanes) {
      // Back-pressure: while released packets wait for the ring, the port is not read (its
      // ring fills, and the switch holds what it sends in its backlog), but due batches still
      // leave on time.
      const size_t waited = l->waiting();
      uint16_t n = 0;
      if (l->push_out()) {
        n = l->in->rx(pkts.data(), kBurst);
        if (n) l->in->count_rx(pkts.data(), n);
      }
      const std::optional<Nanos> t = l->clock.advance(pkts.data(), n, clock.now(), ts_of);
      if (t) l->stage->run(pkts.data(), n, *t, l->out);
      const bool released = l->waiting() > 0;
      l->push_out();
      moved += n + (released || l->waiting() != waited ? 1 : 0);
      held += l->stage->held();
      waiting += l->waiting();
    }
    b->held.store(held);
    b->waiting.store(waiting);
    b->busy.store(false);
    if (moved) {
      b->activity.fetch_add(1, std::memory_order_relaxed);
      b->busy_ns += uint64_t(clock.now() - t0);
    }
  }
  // Releases everything; what the rings cannot take waits in the lanes' backlogs for the
  // server (BoxLane::take, once `done`).
  for (auto& l : b->lanes) {
    l->stage->flush(l->clock.flush_time(clock.now()), l->out);
    for (int i = 0; i < 1000 && !l->push_out(); ++i) {
    }
  }
  b->held.store(0);
  b->done.store(true, std::memory_order_release);
  return 0;
}

}  // namespace nfpark::dp
