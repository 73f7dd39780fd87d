// trace_bench: wall time of the trace tools on 1,000,000 packets — generate (in memory and to a
// pcap), read, analyse (stats) and compare (reorder). Usage: trace_bench [packets] [dir]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trace/generator.h"
#include "trace/pcap_reader.h"
#include "trace/reorder.h"
#include "trace/trace_stats.h"

using namespace nfpark::trace;

namespace {
template <class F>
double time_s(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  for (const char* size : {"64", "dc"}) {
    GenConfig c;
    c.packets = n;
    c.flows = 100000;
    c.slf = 1;
    c.proto = GenProto::kMix;
    SizeSpec::parse(size, c.size, nullptr);
    const std::string f = dir + "/trace_bench_" + size + ".pcap";
    std::string err;
    Trace t;
    double g_mem = time_s([&] { generate_trace(c, t); });
    double g_file = time_s([&] {
      if (!generate_pcap(c, f, Precision::kNano, &err)) std::fprintf(stderr, "%s\n", err.c_str());
    });
    Trace back;
    double load = time_s([&] { load_trace(f, back, &err); });
    TraceStats s;
    double st = time_s([&] { stats_file(f, s, &err); });
    ReorderStats r;
    double ro = time_s([&] { reorder_files(f, f, r, &err); });
    std::printf(
        "size %-4s %llu pkts, %llu flows: gen(mem) %.2f s  gen(pcap) %.2f s  load %.2f s  "
        "stats %.2f s  reorder %.2f s  (%.0f ns/pkt gen, %.0f ns/pkt stats; slf %.2f)\n",
        size, (unsigned long long)n, (unsigned long long)s.flows, g_mem, g_file, load, st, ro,
        g_file * 1e9 / double(n), st * 1e9 / double(n), s.slf);
    std::remove(f.c_str());
  }
  return 0;
}
