#include "park/queue_mem_config.h"

namespace nfpark::park {

std::string QueueMemConfig::validate() const {
  if (ports == 0) return "queuemem.ports must be >= 1 (output ports with payload queues)";
  if (queues == 0) return "queuemem.queues must be >= 1 (payload queues per port; P4: 31)";
  if (slices == 0 || slices > queues)
    return "queuemem.slices must be in 1..queues (" + std::to_string(queues) +
           "); each slice needs at least one queue";
  if (batch == 0) return "queuemem.batch must be >= 1 (payloads per batch; P4 experiments: 20)";
  if (header_array == 0) return "queuemem.header_array must be >= 1 (P4: 94000)";
  if (lost_after <= 0)
    return "queuemem.lost_after_us must be > 0 (how long a missing header may be overtaken "
           "before its batch is recovered; default 50000)";
  if (seal_after < 0) return "queuemem.seal_after_us must be >= 0 (0: batches close when full)";
  return {};
}

void QueueMemCounters::report(const CounterSink& s) const {
  s("rx", rx);
  s("splits", splits);
  s("not_split_small", not_split_small);
  s("not_split_filtered", not_split_filtered);
  s("not_split_untaggable", not_split_untaggable);
  s("not_split_no_queue", not_split_no_queue);
  s("not_split_no_buffer", not_split_no_buffer);
  s("not_split_store_full", not_split_store_full);
  s("not_split_large", not_split_large);
  s("joined_whole", joined_whole);
  s("refused", refused);
  s("released", released);
  s("returned_whole", returned_whole);
  s("untagged_returned", untagged_returned);
  s("drop.id_mismatch", drop_id_mismatch);
  s("drop.header_lost", drop_header_lost);
  s("drop.explicit", drop_explicit);
  s("drop.explicit_whole", drop_explicit_whole);
  s("drop.no_headroom", drop_no_headroom);
  s("drop.stranded_at_exit", stranded_at_exit);
  s("headers_returned", headers_returned);
  s("bad_tag", bad_tag);
  s("stale_headers", stale_headers);
  s("duplicate_headers", duplicate_headers);
  s("wrong_port", wrong_port);
  s("whole_lost", whole_lost);
  s("batches_complete", batches_complete);
  s("batches_sealed", batches_sealed);
  s("batches_waited", batches_waited);
  s("recoveries", recoveries);
  s("recoveries_idle", recoveries_idle);
  s("recoveries_down", recoveries_down);
  s("batches_drained", batches_drained);
  s("held_pkts", held_pkts);
  s("held_bytes", held_bytes);
  s("peak_pkts", peak_pkts);
  s("peak_bytes", peak_bytes);
}

}  // namespace nfpark::park
