#include "nf/simple.h"

#include <x86intrin.h>

#include <algorithm>
#include <cstring>

namespace nfpark::nf {

void MacSwap::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos) {
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass || pkts[i].len < 12) continue;
    uint8_t tmp[6];
    std::memcpy(tmp, pkts[i].data, 6);
    std::memcpy(pkts[i].data, pkts[i].data + 6, 6);
    std::memcpy(pkts[i].data + 6, tmp, 6);
    ++packets_;
  }
}

void Forward::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos) {
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    ++packets_;
    bytes_ += pkts[i].wire_len;
  }
}

void Busy::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos) {
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    const uint64_t start = __rdtsc();
    while (__rdtsc() - start < cycles_) {
    }
    ++packets_;
  }
}

}  // namespace nfpark::nf
