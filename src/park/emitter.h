// Emitter: where a parking mode puts the packets it releases. A mode may release none, one or
// many packets per input (QUEUE-MEM releases a whole batch when its last header returns), so the
// engine hands it an Emitter and moves what it finds there. Capacity is reserved up front; the
// engine clears it after each burst, so there is no allocation in steady state.
#pragma once
#include <cstddef>
#include <vector>

namespace nfpark::park {

template <typename Handle>
class Emitter {
 public:
  explicit Emitter(size_t reserve = 1024) { pkts_.reserve(reserve); }
  void push(Handle h) { pkts_.push_back(h); }
  size_t size() const { return pkts_.size(); }
  bool empty() const { return pkts_.empty(); }
  Handle operator[](size_t i) const { return pkts_[i]; }
  const Handle* data() const { return pkts_.data(); }
  void clear() { pkts_.clear(); }
  void erase_front(size_t n) { pkts_.erase(pkts_.begin(), pkts_.begin() + ptrdiff_t(n)); }

 private:
  std::vector<Handle> pkts_;
};

}  // namespace nfpark::park
