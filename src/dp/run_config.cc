#include "dp/run_config.h"

#include <filesystem>
#include <set>

namespace nfpark::dp {

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "baseline" || s == "host") return Mode::kBaseline;
  if (s == "payloadpark") return Mode::kPayloadPark;
  if (s == "queuemem") return Mode::kQueueMem;
  if (s == "nfslicer") return Mode::kNfSlicer;
  if (s == "nicmem") return Mode::kNicmem;
  if (s == "split") return Mode::kSplit;
  return std::nullopt;
}

std::optional<Role> parse_role(std::string_view s) {
  if (s == "all") return Role::kAll;
  if (s == "switch") return Role::kSwitch;
  if (s == "nf") return Role::kNf;
  return std::nullopt;
}

std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::kBaseline: return "baseline";
    case Mode::kPayloadPark: return "payloadpark";
    case Mode::kQueueMem: return "queuemem";
    case Mode::kNfSlicer: return "nfslicer";
    case Mode::kNicmem: return "nicmem";
    case Mode::kSplit: return "split";
  }
  return "?";
}

namespace {

// Reads typed keys from one table and rejects keys it does not know (typos are errors).
class Section {
 public:
  Section(const toml::table* t, std::string name, std::string file, std::string& err)
      : t_(t), name_(std::move(name)), file_(std::move(file)), err_(err) {}

  template <typename T>
  bool get(const char* key, T& out) {
    seen_.insert(key);
    if (!t_) return true;
    const toml::node* n = t_->get(key);
    if (!n) return true;
    if constexpr (std::is_same_v<T, bool>) {
      if (auto v = n->value<bool>()) return out = *v, true;
      return fail(key, "true or false");
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = n->value<std::string>()) return out = *v, true;
      return fail(key, "a string");
    } else if constexpr (std::is_floating_point_v<T>) {
      if (auto v = n->value<double>()) return out = T(*v), true;
      return fail(key, "a number");
    } else {
      auto v = n->value<int64_t>();
      if (v && *v >= 0 && uint64_t(*v) <= uint64_t(std::numeric_limits<T>::max()))
        return out = T(*v), true;
      return fail(key, "an integer from 0 to " + std::to_string(std::numeric_limits<T>::max()));
    }
  }
  const toml::node* raw(const char* key) {
    seen_.insert(key);
    return t_ ? t_->get(key) : nullptr;
  }
  bool fail(const std::string& key, const std::string& expected) {
    err_ = file_ + ": [" + name_ + "] " + key + ": expected " + expected;
    return false;
  }
  bool check_unknown() {
    if (!t_) return true;
    for (auto& [k, v] : *t_) {
      if (!seen_.count(std::string(k.str()))) {
        err_ = file_ + ": [" + name_ + "] unknown key '" + std::string(k.str()) + "'";
        return false;
      }
    }
    return true;
  }

 private:
  const toml::table* t_;
  std::string name_, file_;
  std::string& err_;
  std::set<std::string> seen_;
};

bool parse_key(const std::string& hex, std::array<uint8_t, 16>& key) {
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    key[i] = uint8_t(hi << 4 | lo);
  }
  return true;
}

}  // namespace

bool parse_tag_key(const std::string& hex, std::array<uint8_t, 16>& key) { return parse_key(hex, key); }

bool load_run_config(const std::string& path, RunConfig& cfg, std::string& err) {
  std::shared_ptr<toml::table> root;
  try {
    root = std::make_shared<toml::table>(toml::parse_file(path));
  } catch (const toml::parse_error& e) {
    err = path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description());
    return false;
  }
  cfg.source = path;
  auto dir = std::filesystem::path(path).parent_path();
  auto rel = [&](const std::string& p) {
    return p.empty() || std::filesystem::path(p).is_absolute() ? p : (dir / p).string();
  };
  for (auto& [k, v] : *root) {
    std::string key(k.str());
    if (key != "run" && key != "park" && key != "faults" && key != "nf" && key != "queuemem" &&
        key != "nfslicer" && key != "nicmem") {
      err = path + ": unknown section [" + key +
            "] (expected run, park, queuemem, nfslicer, nicmem, faults, nf.NAME)";
      return false;
    }
    if (!v.is_table()) {
      err = path + ": '" + key + "' must be a table ([" + key + "])";
      return false;
    }
  }
  Section run(root->get_as<toml::table>("run"), "run", path, err);
  std::string mode = std::string(to_string(cfg.mode));
  if (!run.get("mode", mode)) return false;
  auto m = parse_mode(mode);
  if (!m) return run.fail("mode", "one of baseline, payloadpark, queuemem, nfslicer, nicmem, split");
  cfg.mode = *m;
  std::string in, out, role = "all";
  if (!run.get("role", role)) return false;
  auto r = parse_role(role);
  if (!r) return run.fail("role", "one of all, switch, nf");
  cfg.role = *r;
  if (!run.get("nf_port", cfg.nf_port) || !run.get("port", cfg.port) ||
      !run.get("idle_exit_s", cfg.idle_exit_s))
    return false;
  if (!run.get("chain", cfg.chain) || !run.get("in", in) || !run.get("out", out) ||
      !run.get("nf_lcore", cfg.nf_lcore) || !run.get("notify_drops", cfg.notify_drops) ||
      !run.get("reframe_us", cfg.reframe_us) || !run.get("timeout_s", cfg.timeout_s) ||
      !run.get("pool_mbufs", cfg.pool_mbufs) || !run.get("mem_mb", cfg.mem_mb) ||
      !run.get("progress", cfg.progress) || !run.get("pace", cfg.pace) || !run.check_unknown())
    return false;
  if (!in.empty()) cfg.in_path = rel(in);
  if (const toml::node* tp = run.raw("traffic")) {
    const toml::array* a = tp->as_array();
    if (!a || a->size() != 2 || !(*a)[0].is_string() || !(*a)[1].is_string())
      return run.fail("traffic", "two port specs, e.g. [\"vdev:net_af_packet0,iface=a\", \"vdev:net_af_packet1,iface=b\"]");
    cfg.traffic_ports = {*(*a)[0].value<std::string>(), *(*a)[1].value<std::string>()};
  }
  if (!out.empty()) cfg.out_path = rel(out);

  Section park(root->get_as<toml::table>("park"), "park", path, err);
  auto& pc = cfg.park;
  if (!park.get("min_payload", pc.min_payload) || !park.get("slots", pc.slots) ||
      !park.get("max_exp", pc.max_exp) || !park.get("slices", pc.slices))
    return false;
  if (const toml::node* pb = park.raw("park_bytes")) {
    if (auto s = pb->value<std::string>(); s && *s == "all") pc.park_bytes = 0;
    else if (!park.get("park_bytes", pc.park_bytes)) return false;
  }
  std::string fmt(to_string(pc.format)), key;
  if (!park.get("format", fmt) || !park.get("key", key)) return false;
  auto f = park::parse_tag_format(fmt);
  if (!f) return park.fail("format", "\"nfpark\" or \"payloadpark\"");
  pc.format = *f;
  if (!key.empty()) {
    std::array<uint8_t, 16> k{};
    if (!parse_key(key, k)) return park.fail("key", "32 hex digits (a 128-bit SipHash key)");
    pc.key = k;
  }
  if (const toml::node* ns = park.raw("no_split")) {
    const toml::table* t = ns->as_table();
    if (!t) return park.fail("no_split", "a table with dst_prefixes, dst_ports, protocols");
    Section nsec(t, "park.no_split", path, err);
    if (auto* a = nsec.raw("dst_prefixes")) {
      if (!a->is_array()) return nsec.fail("dst_prefixes", "an array of prefixes");
      for (auto& e : *a->as_array()) {
        park::Prefix p;
        std::string perr;
        auto s = e.value<std::string>();
        if (!s || !park::parse_prefix(*s, p, perr)) return nsec.fail("dst_prefixes", perr.empty() ? "strings" : perr);
        pc.no_split.dst_prefixes.push_back(p);
      }
    }
    for (const char* name : {"dst_ports", "protocols"}) {
      if (auto* a = nsec.raw(name)) {
        if (!a->is_array()) return nsec.fail(name, "an array of integers");
        for (auto& e : *a->as_array()) {
          auto v = e.value<int64_t>();
          int64_t max = std::string(name) == "dst_ports" ? 65535 : 255;
          if (!v || *v < 0 || *v > max) return nsec.fail(name, "integers 0.." + std::to_string(max));
          if (std::string(name) == "dst_ports") pc.no_split.dst_ports.push_back(uint16_t(*v));
          else pc.no_split.protocols.push_back(uint8_t(*v));
        }
      }
    }
    if (!nsec.check_unknown()) return false;
  }
  if (!park.check_unknown()) return false;
  if (pc.slots == 0 || pc.slots > (1u << 24))
    return park.fail("slots", "an integer from 1 to 16777216 (slots per NF server)");
  if (pc.max_exp == 0) return park.fail("max_exp", "an integer from 1 to 255");
  if (pc.slices == 0) return park.fail("slices", "an integer from 1 to 255");

  Section qm(root->get_as<toml::table>("queuemem"), "queuemem", path, err);
  auto& q = cfg.queuemem;
  if (!qm.get("queues", q.queues) || !qm.get("slices", q.slices) || !qm.get("batch", q.batch) ||
      !qm.get("header_array", q.header_array) || !qm.get("min_payload", q.min_payload) ||
      !qm.check_unknown())
    return false;
  if (std::string e = q.validate(); !e.empty()) {
    err = path + ": [queuemem] " + e;
    return false;
  }
  Section sl(root->get_as<toml::table>("nfslicer"), "nfslicer", path, err);
  auto& so = cfg.slicer;
  if (!sl.get("thr", so.thr) || !sl.get("slice_bytes", so.slice_bytes) ||
      !sl.get("entries", so.entries) || !sl.get("ttl", so.ttl) || !sl.check_unknown())
    return false;
  if (auto e = park::check(so)) {
    err = path + ": [nfslicer] " + *e;
    return false;
  }
  Section nm(root->get_as<toml::table>("nicmem"), "nicmem", path, err);
  if (!nm.get("header_segment", cfg.header_segment) || !nm.get("pool", cfg.nicmem_mbufs) ||
      !nm.check_unknown())
    return false;

  Section faults(root->get_as<toml::table>("faults"), "faults", path, err);
  auto& fl = cfg.faults;
  if (!faults.get("drop", fl.drop) || !faults.get("dup", fl.dup) ||
      !faults.get("reorder", fl.reorder) || !faults.get("corrupt_tag", fl.corrupt_tag) ||
      !faults.get("forge_tag", fl.forge_tag) ||
      !faults.get("delay_us", fl.delay_us) || !faults.get("delay_share", fl.delay_share) ||
      !faults.get("seed", fl.seed) ||
      !faults.check_unknown())
    return false;
  for (double p : {fl.drop, fl.dup, fl.reorder, fl.corrupt_tag, fl.forge_tag, fl.delay_share})
    if (p < 0 || p > 1)
      return faults.fail("drop/dup/reorder/corrupt_tag/forge_tag/delay_share",
                         "a fraction from 0 to 1");

  cfg.nf_config = root;  // the chain reads its [nf.NAME] tables from here
  return true;
}

}  // namespace nfpark::dp
