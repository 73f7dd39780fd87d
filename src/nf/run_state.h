// NF state as bytes, for the tests that compare run-aware with per-packet processing
// (tests/nf/run_equivalence_test.cc): two NFs fed the same packets must export equal bytes.
//
// export_table writes a FlowTable's live entries in slot order (slot, key, value, last seen)
// and its counters, so equal exports mean equal contents *and* equal placement — a run path
// that inserted flows in another order, or refreshed a stamp it should not have, differs.
#pragma once
#include <cstdint>
#include <vector>

#include "nf/nf.h"

namespace nfpark::nf {

template <class Table>
void export_table(const Table& t, std::vector<uint8_t>& out) {
  for (uint32_t s = 0; s < t.slots(); ++s) {
    if (!t.occupied(s)) continue;
    const auto& e = t.at(s);
    put_state(out, s);
    put_state(out, e.key);
    put_state(out, e.value);
    put_state(out, e.last_seen);
  }
  put_state(out, uint64_t(t.size()));
  put_state(out, t.expired_count());
  put_state(out, t.insert_failed());
}

}  // namespace nfpark::nf
