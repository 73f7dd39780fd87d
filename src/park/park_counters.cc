#include "park/park_counters.h"

namespace nfpark::park {

void ParkCounters::report(const CounterSink& s) const {
  s("splits", splits);
  s("merges", merges);
  s("explicit_drops", explicit_drops);
  s("evictions", evictions);
  s("premature_evictions", premature_evictions);
  s("returned_unsplit", returned_unsplit);
  s("not_split_small", not_split_small);
  s("not_split_busy", not_split_busy);
  s("not_split_filtered", not_split_filtered);
  s("not_split_untaggable", not_split_untaggable);
  s("not_split_no_buffer", not_split_no_buffer);
  s("not_split_large", not_split_large);
  s("bad_tag", bad_tag);
  s("wrong_slice", wrong_slice);
  s("duplicate_headers", duplicate_headers);
  s("untagged_returned", untagged_returned);
  s("explicit_drops_whole", explicit_drops_whole);
  s("no_headroom", no_headroom);
  s("stranded_at_exit", stranded_at_exit);
  s("reclaimed", reclaimed);
}

}  // namespace nfpark::park
