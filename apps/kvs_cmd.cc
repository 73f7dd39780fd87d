// nfpark kvs: memcached over UDP on a DPDK port, hot values sent zero-copy (nicmem's nmKVS).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <functional>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "dp/eal.h"
#include "dp/kvs_engine.h"
#include "dp/kvs_tap.h"

namespace nfpark::app {

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) {
  g_stop = true;
}

// `--tap NAME ADDR/PREFIX` takes two values: taken out of argv before Args sees the rest.
bool take_tap(int& argc, char** argv, std::string& name, std::string& addr, std::string& err) {
  int w = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--tap") {
      argv[w++] = argv[i];
      continue;
    }
    if (i + 2 >= argc || argv[i + 1][0] == '-' || argv[i + 2][0] == '-') {
      err = "--tap: expected NAME ADDR/PREFIX, e.g. --tap kvs0 10.77.0.1/24";
      return false;
    }
    if (!name.empty()) return (err = "--tap given twice"), false;
    name = argv[i + 1];
    addr = argv[i + 2];
    i += 2;
  }
  argc = w;
  return true;
}

bool get_u64(Args& a, const char* name, uint64_t lo, uint64_t hi, uint64_t& out, std::string& err) {
  if (!a.get_u64(name, out)) return (err = a.error()), false;
  if (out < lo || out > hi) {
    err = std::string("--") + name + ": " + a.get(name) + " is out of range (" +
          std::to_string(lo) + ".." + std::to_string(hi) + ")";
    return false;
  }
  return true;
}

bool configure(Args& a, const std::string& tap, const std::string& tap_addr, dp::KvsEngineConfig& c,
               std::string& port, uint32_t& host_addr, uint8_t& prefix, std::string& err) {
  if (tap.empty() == !a.has("port"))
    return (err = "give one of --port SPEC or --tap NAME ADDR/PREFIX (see --help)"), false;
  if (!tap.empty()) {
    if (tap.size() >= 16 || tap.find_first_of(" /,") != std::string::npos)
      return (err = "--tap: '" + tap + "' is not an interface name (at most 15 characters)"), false;
    if (!dp::parse_ipv4_prefix(tap_addr, host_addr, prefix))
      return (err =
                  "--tap: '" + tap_addr + "' is not ADDR/PREFIX (e.g. 10.77.0.1/24, prefix 1..30)"),
             false;
    port = dp::tap_port_spec(tap);
  } else {
    port = a.get("port");
  }
  if (a.has("ip")) {
    if (!dp::parse_ipv4(a.get("ip"), c.ip))
      return (err = "--ip: '" + a.get("ip") + "' is not an IPv4 address"), false;
  } else if (!tap.empty()) {
    c.ip = host_addr + 1;  // the next address of the TAP's prefix
  } else {
    return (err = "--ip: the server's address is required with --port"), false;
  }
  if (!tap.empty()) {
    const uint32_t mask = ~uint32_t(0) << (32 - prefix);
    if ((c.ip & mask) != (host_addr & mask) || c.ip == host_addr || (c.ip & ~mask) == 0 ||
        (c.ip & ~mask) == ~mask)
      return (err = "--ip: " + dp::ipv4_to_string(c.ip) + " is not a free host address of " +
                    tap_addr),
             false;
  }
  uint64_t v = 0;
  struct U {
    const char* name;
    uint64_t lo, hi;
    std::function<void(uint64_t)> set;
  } us[] = {
      {"udp-port", 1, 65535, [&](uint64_t x) { c.udp_port = uint16_t(x); }},
      {"log-mb", 4, 1u << 20, [&](uint64_t x) { c.server.cache.log_bytes = x << 20; }},
      {"hot-mb", 0, 1u << 16, [&](uint64_t x) { c.nicmem_bytes = x << 20; }},
      {"hot-items", 1, 1u << 24, [&](uint64_t x) { c.server.cache.hot_items = uint32_t(x); }},
      {"promote-min", 1, 1u << 20,
       [&](uint64_t x) { c.server.cache.policy.promote_min = uint32_t(x); }},
      {"max-value", 1, 64u << 20, [&](uint64_t x) { c.server.protocol.max_value = uint32_t(x); }},
      {"zc-min", 0, 64u << 20, [&](uint64_t x) { c.server.cache.zc_min = uint32_t(x); }},
      {"mbufs", 2048, 1u << 20, [&](uint64_t x) { c.mbufs = uint32_t(x); }},
  };
  for (U& u : us) {
    if (!get_u64(a, u.name, u.lo, u.hi, v, err)) return false;
    u.set(v);
  }
  if (a.has("hot-keys")) {
    std::stringstream ss(a.get("hot-keys"));
    for (std::string k; std::getline(ss, k, ',');) {
      if (k.empty() || k.size() > 250)
        return (err = "--hot-keys: keys are 1..250 bytes, separated by commas"), false;
      c.server.cache.pinned.push_back(k);
    }
  }
  c.server.cache.auto_hot = !a.flag_set("no-auto-hot");
  c.zero_copy = !a.flag_set("no-zero-copy");
  c.server.protocol.version = a.get("version-string");
  if (std::string e = c.server.check(); !e.empty()) return (err = e), false;
  return true;
}

}  // namespace

int kvs_main(int argc, char** argv) {
  Args a("nfpark kvs",
         "A memcached-compatible key-value server (UDP) on a DPDK port; hot values\n"
         "are sent zero-copy from a \"NIC memory\" region (nicmem's nmKVS).");
  a.option("port", "SPEC", "DPDK port: vdev:DEVARGS, pci:ADDR or a port id (see docs/kvs.md)")
      .option("tap", "NAME ADDR/PREFIX",
              "create kernel TAP interface NAME with ADDR/PREFIX\n"
              "(net_tap), so that local programs reach the server over UDP")
      .option("ip", "ADDR", "the server's IPv4 address (default with --tap: ADDR + 1)")
      .option("udp-port", "N", "UDP port", "11211")
      .option("log-mb", "MB", "item log size (all items; FIFO eviction with re-append)", "64")
      .option("hot-mb", "MB", "hot region (\"NIC memory\") size; 0: no hot set", "64")
      .option("hot-items", "N", "most items in the hot set", "65536")
      .option("hot-keys", "K1,K2", "keys that are always hot (pinned)")
      .option("promote-min", "N", "accesses (decayed count-min estimate) before a key is hot", "3")
      .option("max-value", "BYTES", "largest value (memcached: 1 MiB)", "1048576")
      .option("zc-min", "BYTES", "values shorter than this are copied, never hot (see docs/kvs.md)",
              "0")
      .option("version-string", "S", "what `version` answers", "1.6.18-nfpark")
      .option("mbufs", "N", "mbufs per pool (reply frames, external segments)", "16384")
      .option("mem-mb", "MB", "DPDK memory (default: derived from the pools and the hot region)")
      .option("timeout", "S", "stop after S seconds (0: on SIGINT/SIGTERM only)", "0")
      .flag("no-auto-hot", "no frequency-based promotion: only --hot-keys are hot")
      .flag("no-zero-copy", "copy every value into the reply (no hot set)")
      .flag("busy-poll", "never sleep when idle (default: sleep 100 us after 1000 empty polls)")
      .flag("json", "print the counters as JSON at exit")
      .epilog(
          "Example: sudo nfpark kvs --tap kvs0 10.77.0.1/24 --hot-keys user:1,user:2\n"
          "  then: printf '\\0\\1\\0\\0\\0\\1\\0\\0version\\r\\n' | nc -u -w1 10.77.0.2 11211\n"
          "Runs until SIGINT/SIGTERM (or --timeout); exits 1 if a frame or a buffer went\n"
          "unaccounted. Protocol, store, hot set and results: docs/kvs.md.");
  std::string tap, tap_addr, err;
  if (!take_tap(argc, argv, tap, tap_addr, err)) {
    std::fprintf(stderr, "nfpark kvs: %s\n", err.c_str());
    return 2;
  }
  if (!a.parse(argc, argv)) {
    std::fprintf(stderr, "nfpark kvs: %s\n", a.error().c_str());
    return 2;
  }
  if (a.help()) {
    std::fputs(a.usage().c_str(), stdout);
    return 0;
  }
  dp::KvsEngineConfig cfg;
  std::string port;
  uint32_t host_addr = 0;
  uint8_t prefix = 0;
  uint64_t mem_mb = 0, timeout_s = 0;
  if (!configure(a, tap, tap_addr, cfg, port, host_addr, prefix, err) ||
      (a.has("mem-mb") && !get_u64(a, "mem-mb", 64, 1u << 20, mem_mb, err)) ||
      !get_u64(a, "timeout", 0, 1u << 30, timeout_s, err)) {
    std::fprintf(stderr, "nfpark kvs: %s\n", err.c_str());
    return 2;
  }
  dp::EalOptions eo;
  eo.extra = {"--log-level=pmd.net.tap:crit"};  // net_tap's notes on qdiscs and secondaries
  eo.mem_mb = unsigned(mem_mb ? mem_mb
                              : (cfg.zero_copy ? cfg.nicmem_bytes >> 20 : 0) +
                                    uint64_t(cfg.mbufs) * 2 * 2600 / (1 << 20) + 128);
  if (!dp::eal_init(eo, err)) {
    std::fprintf(stderr, "nfpark kvs: %s\n", err.c_str());
    return 1;
  }
  int rc = 0;
  {  // the engine goes before the EAL
    dp::KvsEngine engine;
    if (!engine.init(cfg, err) || !engine.open_port(port, err) ||
        (!tap.empty() && !dp::tap_configure(tap, host_addr, prefix, err))) {
      std::fprintf(stderr, "nfpark kvs: %s\n", err.c_str());
      rc = 1;
    } else {
      std::fprintf(stderr, "nfpark kvs: serving memcached over UDP at %s:%u on %s (zero-copy %s)\n",
                   dp::ipv4_to_string(cfg.ip).c_str(), unsigned(cfg.udp_port), port.c_str(),
                   engine.zero_copy() ? "on" : "off");
      std::signal(SIGINT, on_signal);
      std::signal(SIGTERM, on_signal);
      const double seconds = engine.serve(g_stop, double(timeout_s), a.flag_set("busy-poll"));
      engine.close();
      std::fputs(engine.report(port, seconds, a.flag_set("json")).c_str(), stdout);
      if (!engine.balanced()) {
        std::fprintf(stderr,
                     "nfpark kvs: frames in != handled + drops (see the counters): a bug\n");
        rc = 1;
      }
      if (!engine.pools_full()) {
        std::fprintf(stderr, "nfpark kvs: mempools not full at exit: a buffer leaked\n");
        rc = 1;
      }
    }
  }
  dp::eal_cleanup();
  return rc;
}

}  // namespace nfpark::app
