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
  uint64_t n = 0, bytes = 0;  // the burst's sums, without a branch per packet
  for (size_t i = 0; i < pkts.size(); ++i) {
    const uint64_t pass = verdicts[i] == Verdict::kPass;
    n += pass;
    bytes += pkts[i].wire_len & (0 - pass);
  }
  packets_ += n;
  bytes_ += bytes;
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
