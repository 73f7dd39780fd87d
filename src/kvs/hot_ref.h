// HotRef: one reference to a hot item's stable buffer, held by a reply in flight. The hot set
// hands one out per zero-copy response (HotSet::serve) and takes it back exactly once
// (HotSet::release); the generation catches a release of a slot that was reused meanwhile.
#pragma once
#include <cstdint>

namespace nfpark::kvs {

struct HotRef {
  static constexpr uint32_t kNone = ~0u;
  uint32_t slot = kNone;
  uint32_t gen = 0;
  bool valid() const { return slot != kNone; }
};

}  // namespace nfpark::kvs
