// split_merge_bench: the parking switch's own cost per packet — SwitchMode::to_nf + from_nf and
// nothing else — for PayloadPark (nfpark and 7-byte tags), QUEUE-MEM and NFSlicer against
// baseline, hot cache, in one run.
//
//   split_merge_bench            default run (300 interleaved trials per case)
//   split_merge_bench --quick    60 trials
//
// Method: 1024 generated frames in mbufs (dp_harness.h's EAL, pools and frames). Per trial and
// mode, bursts of 32: to_nf, then from_nf on what to_nf sent to the NF (no NF, no ports: the
// header packets come straight back), and the merged packets take their mbufs' places for the
// next trial. TSC cycles per packet inside each call; per mode the minimum over trials (the
// machine is shared: the minimum is the run least disturbed). Modes interleave in every trial.
// QUEUE-MEM releases a batch when its last header is back, so its packets leave in batches,
// not burst by burst: its trial ends with drain() (timed with from_nf: partial batches), and
// the packets take the places of the frames they carry (their input sequence number).
// What it isolates: switch_bench measures the whole loop (ports, NF server, wire), where this cost
// is diluted and noisy; here it is the only thing timed, so small changes to split/merge show.
// The ratio printed is baseline cycles / mode cycles of to_nf + from_nf: the switch alone, a far
// harsher ratio than switch_bench's loop ratio (the baseline only counts bytes here).
// Checks: every packet comes back from every burst, and after the last trial every frame is
// byte-identical to its pristine image and every pool is full again.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "dp_harness.h"

using namespace nfpark;
using namespace nfpark::bench;

namespace {

const Variant kVariants[] = {
    {"baseline", dp::Mode::kBaseline, 0},
    {"payloadpark", dp::Mode::kPayloadPark, 160},
    {"payloadpark-all", dp::Mode::kPayloadPark, 0},
    {"payloadpark-7B", dp::Mode::kPayloadPark, 160, park::TagFormat::kPayloadPark},
    {"queuemem", dp::Mode::kQueueMem, 0},
    {"nfslicer", dp::Mode::kNfSlicer, 0},
};
constexpr size_t kModes = sizeof(kVariants) / sizeof(kVariants[0]);

bool bench_traffic(DpEnv& env, const Traffic& traffic, int trials,
                   std::vector<std::string>& summary) {
  const char* label = traffic.label;
  const Frames f = traffic.frames();
  std::unique_ptr<dp::SwitchMode> modes[kModes];
  for (size_t k = 0; k < kModes; ++k) {
    dp::RunConfig c;
    c.mode = kVariants[k].mode;
    c.park.park_bytes = kVariants[k].park_bytes;
    c.park.format = kVariants[k].format;
    std::string err;
    if (!run::derive_keys(c, err))  // tags and tokens keyed as in every run
      return std::fprintf(stderr, "split_merge_bench: %s\n", err.c_str()), false;
    modes[k] = dp::make_switch_mode(c, env.nic, err);
    if (!modes[k]) return std::fprintf(stderr, "split_merge_bench: %s\n", err.c_str()), false;
  }
  std::vector<rte_mbuf*> mbs(f.size());
  for (size_t i = 0; i < mbs.size(); ++i) {
    mbs[i] = rte_pktmbuf_alloc(env.pkts);
    if (!mbs[i]) return std::fprintf(stderr, "split_merge_bench: pool empty\n"), false;
    std::memcpy(rte_pktmbuf_mtod(mbs[i], uint8_t*), f.data(i), f.len[i]);
    mbs[i]->data_len = uint16_t(f.len[i]);
    mbs[i]->pkt_len = f.len[i];
    dp::MbufMeta::seq(mbs[i]) = i;
  }
  double best_in[kModes], best_out[kModes];
  std::fill(best_in, best_in + kModes, 1e30);
  std::fill(best_out, best_out + kModes, 1e30);
  std::vector<rte_mbuf*> nf, out, back_all;
  nf.reserve(4 * dp::kBurst);
  out.reserve(4 * dp::kBurst);
  back_all.reserve(mbs.size());
  bool ok = true;
  for (int t = 0; t < trials && ok; ++t) {
    for (size_t k = 0; k < kModes && ok; ++k) {
      const bool batches = kVariants[k].mode == dp::Mode::kQueueMem;
      uint64_t in = 0, back = 0;
      back_all.clear();
      for (size_t b = 0; b < mbs.size(); b += dp::kBurst) {
        const uint16_t n = uint16_t(std::min<size_t>(dp::kBurst, mbs.size() - b));
        nf.clear();
        out.clear();
        const uint64_t t0 = rte_rdtsc();
        const uint16_t took = modes[k]->to_nf(&mbs[b], n, nf, out);
        const uint64_t t1 = rte_rdtsc();
        modes[k]->from_nf(nf.data(), uint16_t(nf.size()), 0, out);
        const uint64_t t2 = rte_rdtsc();
        in += t1 - t0;
        back += t2 - t1;
        back_all.insert(back_all.end(), out.begin(), out.end());
        if (took != n || (!batches && out.size() != n)) {
          std::fprintf(stderr, "split_merge_bench: %s %s: %u taken, %zu of %u packets came back\n",
                       label, kVariants[k].name, took, out.size(), n);
          ok = false;
          break;
        }
      }
      if (ok && batches) {  // the partial batches of the trial's end
        out.clear();
        const uint64_t t0 = rte_rdtsc();
        modes[k]->drain(out);
        back += rte_rdtsc() - t0;
        back_all.insert(back_all.end(), out.begin(), out.end());
      }
      if (!ok || back_all.size() != mbs.size()) {
        std::fprintf(stderr, "split_merge_bench: %s %s: %zu of %zu packets came back\n", label,
                     kVariants[k].name, back_all.size(), mbs.size());
        for (rte_mbuf* m : back_all) rte_pktmbuf_free(m);  // (the others are lost to the check)
        return false;
      }
      for (rte_mbuf* m : back_all) mbs[dp::MbufMeta::seq(m)] = m;
      best_in[k] = std::min(best_in[k], double(in) / double(mbs.size()));
      best_out[k] = std::min(best_out[k], double(back) / double(mbs.size()));
    }
  }
  if (!ok) return false;
  size_t wrong = 0;
  for (size_t i = 0; i < mbs.size(); ++i) {
    rte_mbuf* m = mbs[i];
    const size_t id = i;  // each packet took the place of the frame it carries
    if (m->nb_segs != 1 || m->pkt_len != f.len[id] ||
        std::memcmp(rte_pktmbuf_mtod(m, uint8_t*), f.data(id), f.len[id]) != 0)
      ++wrong;
    rte_pktmbuf_free(m);
  }
  if (wrong || !env.pools_full()) {
    std::fprintf(stderr, "split_merge_bench: %s: %zu frames changed, pools %s\n", label, wrong,
                 env.pools_full() ? "full" : "NOT full (leak)");
    return false;
  }
  const double ns = 1e9 / double(rte_get_tsc_hz());
  const double base = best_in[0] + best_out[0];
  std::printf("\n%s traffic (mean %.0f B), %d trials, min cycles per packet (TSC %.2f GHz)\n",
              label, f.mean_len(), trials, double(rte_get_tsc_hz()) * 1e-9);
  std::printf("  %-16s %8s %8s %8s %8s %8s\n", "mode", "to_nf", "from_nf", "sum", "extra", "ratio");
  for (size_t k = 0; k < kModes; ++k) {
    const double sum = best_in[k] + best_out[k];
    std::printf("  %-16s %8.1f %8.1f %8.1f %8.1f %7.2fx   (%.1f ns extra)\n", kVariants[k].name,
                best_in[k], best_out[k], sum, sum - base, base / sum, (sum - base) * ns);
    if (k == 0) continue;
    char line[160];
    std::snprintf(line, sizeof line, "RATIO switch-only %s/baseline %s %.2fx (+%.0f cycles/pkt)",
                  kVariants[k].name, label, base / sum, sum - base);
    summary.push_back(line);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick =
      parse_quick(argc, argv,
                  "usage: split_merge_bench [--quick]\n"
                  "  switch to_nf + from_nf cycles per packet, hot cache, vs baseline\n");
  DpEnv env;
  if (!init_or_report(env, "split_merge_bench")) return 1;
  std::printf("split_merge_bench%s: one lcore, 1024 mbufs, bursts of 32, no ports, no NF\n",
              quick ? " --quick" : "");
  const int trials = quick ? 60 : 300;
  std::vector<std::string> summary;
  const bool ok = bench_traffic(env, traffic_1500(), trials, summary) &&
                  bench_traffic(env, traffic_dc(), trials, summary);
  return finish(env, summary, ok);
}
