#include "park/slicer_counters.h"

namespace nfpark::park {

void SlicerCounters::report(const CounterSink& s) const {
  s("rx", rx);
  s("sliced", sliced);
  s("unsliced_small", unsliced_small);
  s("unsliced_ineligible", unsliced_ineligible);
  s("unsliced_unparsed", unsliced_unparsed);
  s("unsliced_busy", unsliced_busy);
  s("unsliced_no_buffer", unsliced_no_buffer);
  s("unsliced_bad_core", unsliced_bad_core);
  s("unsliced_large", unsliced_large);
  s("escaped", escaped);
  s("expired", expired);
  s("split_no_headroom", split_no_headroom);
  s("returned", returned);
  s("spliced", spliced);
  s("passed", passed);
  s("unescaped", unescaped);
  s("drop_bad_token", drop_bad_token);
  s("drop_expired", drop_expired);
  s("drop_generation", drop_generation);
  s("drop_bad_length", drop_bad_length);
  s("drop_duplicate", drop_duplicate);
  s("merge_no_headroom", merge_no_headroom);
  s("stranded_at_exit", stranded_at_exit);
}

}  // namespace nfpark::park
