#include "nf/registry.h"

#include <arpa/inet.h>
#include <toml++/toml.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>

#include "nf/aes.h"
#include "nf/counter.h"
#include "nf/firewall.h"
#include "nf/load_balancer.h"
#include "nf/meter.h"
#include "nf/nat.h"
#include "nf/rate_limiter.h"
#include "nf/router.h"
#include "nf/simple.h"
#include "nf/toml_show.h"

namespace nfpark::nf {
namespace {

bool parse_ipv4(std::string_view s, uint32_t& out) {
  std::string z(s);
  in_addr a{};
  if (inet_pton(AF_INET, z.c_str(), &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

bool parse_prefix4(std::string_view s, Prefix4& out) {
  size_t slash = s.find('/');
  unsigned len = 32;
  if (slash != std::string_view::npos) {
    std::string l(s.substr(slash + 1));
    char* end = nullptr;
    len = unsigned(std::strtoul(l.c_str(), &end, 10));
    if (l.empty() || *end || len > 32) return false;
  }
  if (!parse_ipv4(s.substr(0, slash), out.addr)) return false;
  out.len = uint8_t(len);
  if (len < 32) out.addr &= len ? ~0u << (32 - len) : 0;
  return true;
}

bool parse_mac6(std::string_view s, std::array<uint8_t, 6>& mac) {
  unsigned v[6];
  char tail;
  std::string z(s);
  if (std::sscanf(z.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &tail) != 6)
    return false;
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 255) return false;
    mac[i] = uint8_t(v[i]);
  }
  return true;
}

// Reads the keys of one [nf.x] table, remembering which were used so that unknown keys (typos)
// are reported by finish().
class Params {
 public:
  Params(std::string_view nf, const toml::table* t) : nf_(nf), t_(t) {}

  bool u64(const char* key, uint64_t lo, uint64_t hi, uint64_t& out) {
    const toml::node* n = get(key);
    if (!n) return true;
    std::optional<double> d = n->value<double>();  // integers and floats (e.g. 1e9)
    if (!d || *d != std::floor(*d) || *d < double(lo) || *d > double(hi))
      return fail(key, "an integer in " + std::to_string(lo) + ".." + std::to_string(hi), *n);
    out = uint64_t(*d);
    return true;
  }
  template <class T>
  bool uint(const char* key, uint64_t lo, uint64_t hi, T& out) {
    uint64_t v = uint64_t(out);
    if (!u64(key, lo, hi, v)) return false;
    out = T(v);
    return true;
  }
  bool seconds(const char* key, Nanos& out) {  // a non-negative number of seconds
    const toml::node* n = get(key);
    if (!n) return true;
    std::optional<double> d = n->value<double>();
    if (!d || !(*d >= 0) || *d > 1e9) return fail(key, "seconds, a number >= 0", *n);
    out = Nanos(std::llround(*d * 1e9));
    return true;
  }
  // One of `names` (a string); `out` is its index.
  template <class E>
  bool choice(const char* key, std::initializer_list<const char*> names, E& out) {
    const toml::node* n = get(key);
    if (!n) return true;
    std::optional<std::string_view> s = n->value<std::string_view>();
    std::string want;
    size_t i = 0;
    for (const char* name : names) {
      if (s && *s == name) return (out = E(i)), true;
      want += std::string(i++ ? " or " : "") + "\"" + name + "\"";
    }
    return fail(key, want, *n);
  }
  // Array of strings, each parsed by `f`; `what` says what an element must look like.
  bool strings(const char* key, const char* what, const std::function<bool(std::string_view)>& f) {
    const toml::node* n = get(key);
    if (!n) return true;
    const toml::array* a = n->as_array();
    if (!a) return fail(key, std::string("an array of ") + what, *n);
    for (const toml::node& e : *a) {
      std::optional<std::string_view> s = e.value<std::string_view>();
      if (!s || !f(*s)) return fail(key, std::string("an array of ") + what, e);
    }
    return true;
  }
  const toml::array* array(const char* key) {
    const toml::node* n = get(key);
    return n ? n->as_array() : nullptr;
  }
  bool fail(const std::string& key, const std::string& expected, const toml::node& got) {
    error = "[nf." + nf_ + "] " + key + ": expected " + expected + ", got " + show_toml(got);
    return false;
  }
  bool finish() {
    if (!t_) return true;
    for (const auto& [k, v] : *t_) {
      if (std::find(used_.begin(), used_.end(), k.str()) == used_.end()) {
        std::string valid;
        for (const auto& u : known_) valid += (valid.empty() ? "" : ", ") + u;
        error = "[nf." + nf_ + "] unknown key '" + std::string(k.str()) +
                "' (valid keys: " + (valid.empty() ? "none" : valid) + ")";
        return false;
      }
    }
    return true;
  }
  std::string error;

 private:
  const toml::node* get(const char* key) {
    known_.emplace_back(key);
    if (!t_) return nullptr;
    const toml::node* n = t_->get(key);
    if (n) used_.emplace_back(key);
    return n;
  }
  std::string nf_;
  const toml::table* t_;
  std::vector<std::string> used_, known_;
};

bool nat_params(Params& p, NatConfig& c) {
  std::vector<uint32_t> ext;
  bool ok = p.strings("external", "IPv4 addresses or prefixes of /24 or longer", [&](auto s) {
    Prefix4 pf;
    if (!parse_prefix4(s, pf) || pf.len < 24) return false;
    for (uint64_t a = pf.addr; a <= (pf.addr | (pf.len == 32 ? 0 : ~0u >> pf.len)); ++a)
      ext.push_back(uint32_t(a));
    return true;
  });
  if (ok && !ext.empty()) c.external = ext;
  if (ok && c.external.size() > 256) {
    p.error = "[nf.nat] external: at most 256 addresses, got " + std::to_string(ext.size());
    return false;
  }
  std::vector<uint32_t> sorted = c.external;
  std::sort(sorted.begin(), sorted.end());
  if (ok && std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    p.error = "[nf.nat] external: expected distinct addresses, got a duplicate";
    return false;
  }
  ok = ok && p.uint("port_min", 1, 65535, c.port_min) && p.uint("port_max", 1, 65535, c.port_max);
  if (ok && c.port_max < c.port_min) {
    p.error = "[nf.nat] port_max: expected >= port_min (" + std::to_string(c.port_min) + "), got " +
              std::to_string(c.port_max);
    return false;
  }
  return ok &&
         p.strings("inside", "IPv4 prefixes like \"10.0.0.0/8\"",
                   [&](auto s) {
                     Prefix4 pf;
                     if (!parse_prefix4(s, pf)) return false;
                     c.inside.push_back(pf);
                     return true;
                   }) &&
         p.seconds("idle_timeout_s", c.idle_timeout) &&
         p.uint("max_flows", 0, 1ull << 28, c.max_flows) &&
         p.uint("reclaim_probe", 1, 65536, c.reclaim_probe) &&
         p.choice("other_protocols", {"pass", "drop"}, c.other) &&  // OtherProtocols order
         p.uint("frag_states", 4, 1u << 20, c.frag_states) &&
         p.seconds("frag_timeout_s", c.frag_timeout);
}

bool lb_params(Params& p, LbConfig& c) {
  if (!p.strings("vips", "IPv4 addresses", [&](auto s) {
        uint32_t a;
        if (!parse_ipv4(s, a)) return false;
        c.vips.push_back(a);
        return true;
      }))
    return false;
  if (const toml::array* a = p.array("backends")) {
    c.backends.clear();
    const char* want =
        "an array of tables {addr = \"10.10.0.1\", mac = \"02:00:0a:0a:00:01\", weight = 1}";
    for (const toml::node& e : *a) {
      const toml::table* t = e.as_table();
      LbBackend b;
      const toml::node* an = t ? t->get("addr") : nullptr;
      std::optional<std::string_view> addr = an ? an->value<std::string_view>() : std::nullopt;
      if (!addr || !parse_ipv4(*addr, b.addr)) return p.fail("backends", want, e);
      for (const auto& [k, v] : *t)
        if (k.str() != "addr" && k.str() != "mac" && k.str() != "weight")
          return p.fail("backends", want, e);
      b.mac = {
          0x02,           0, uint8_t(b.addr >> 24), uint8_t(b.addr >> 16), uint8_t(b.addr >> 8),
          uint8_t(b.addr)};
      if (const toml::node* m = t->get("mac")) {
        std::optional<std::string_view> ms = m->value<std::string_view>();
        if (!ms || !parse_mac6(*ms, b.mac)) return p.fail("backends", want, e);
      }
      if (const toml::node* w = t->get("weight")) {
        std::optional<int64_t> wv = w->value<int64_t>();
        if (!wv || *wv < 0 || *wv > 1000000)
          return p.fail("backends", want + std::string(" (weight 0..1000000)"), e);
        b.weight = uint32_t(*wv);
      }
      c.backends.push_back(b);
    }
    if (c.backends.empty()) return p.fail("backends", "at least one backend", *a);
  }
  if (!p.uint("table_size", 3, 1u << 24, c.table_size)) return false;
  if (!MaglevTable::is_prime(c.table_size)) {
    p.error = "[nf.lb] table_size: expected a prime (e.g. 65537 or 655373), got " +
              std::to_string(c.table_size);
    return false;
  }
  return p.uint("max_flows", 1, 1ull << 28, c.max_flows) &&
         p.seconds("idle_timeout_s", c.idle_timeout);
}

// What a factory is asked for: the NF (build), or only a check of its parameters and an
// estimate of the memory its tables will take (nothing allocated).
struct Plan {
  bool build = true;
  uint64_t memory = 0;  // bytes
};

using Factory =
    std::function<std::unique_ptr<Nf>(Params&, const toml::table*, std::string&, Plan&)>;

// Bytes of a FlowTable of `capacity` flows (flow_table.h: buckets of 32 slots for capacity * 5/4
// flows, 31 a bucket, an even count; a slot is a 64 B entry and a 2 B tag).
uint64_t flow_table_bytes(uint64_t capacity) {
  return FlowTable<FlowKey, uint64_t[2], FlowKeyHash64>::bytes_for(capacity);
}

template <class Cfg>
uint64_t memory_of(const Cfg& c) {
  if constexpr (std::is_same_v<Cfg, NatConfig>) {
    const uint64_t ports = c.port_max >= c.port_min ? c.port_max - c.port_min + 1u : 0u;
    const uint64_t ext = c.external.size();
    return flow_table_bytes(c.max_flows ? c.max_flows : ext * ports) + (ext << 16) * 4 +
           ext * ports * 2;
  } else if constexpr (std::is_same_v<Cfg, LbConfig>) {
    return flow_table_bytes(c.max_flows) + uint64_t(c.table_size) * 4;
  } else if constexpr (requires { c.max_flows; }) {
    return flow_table_bytes(c.max_flows);
  } else {
    return 0;  // tables bounded by the config's own size (routes, rules, keys)
  }
}

template <class Cfg, class T>
Factory simple_factory(bool (*read)(Params&, Cfg&)) {
  return [read](Params& p, const toml::table*, std::string&, Plan& plan) -> std::unique_ptr<Nf> {
    Cfg c;
    if (!read(p, c) || !p.finish()) return nullptr;
    plan.memory = memory_of(c);
    if (!plan.build) return nullptr;
    return std::make_unique<T>(std::move(c));
  };
}

template <class Cfg, class T>
Factory own_parser() {
  return [](Params&, const toml::table* t, std::string& e, Plan& plan) -> std::unique_ptr<Nf> {
    static const toml::table kEmpty;
    Cfg c;
    if (!Cfg::parse(t ? *t : kEmpty, c, e)) return nullptr;
    plan.memory = memory_of(c);
    if (!plan.build) return nullptr;
    return T::create(c, e);
  };
}

const std::map<std::string, Factory, std::less<>>& factories() {
  static const std::map<std::string, Factory, std::less<>> m = {
      {"nat", simple_factory<NatConfig, Nat>(nat_params)},
      {"lb", simple_factory<LbConfig, LoadBalancer>(lb_params)},
      {"counter", simple_factory<CounterConfig, FlowCounter>(+[](Params& p, CounterConfig& c) {
         return p.uint("max_flows", 1, 1ull << 28, c.max_flows) &&
                p.seconds("idle_timeout_s", c.idle_timeout);
       })},
      {"ratelimit",
       simple_factory<RateLimiterConfig, RateLimiter>(+[](Params& p, RateLimiterConfig& c) {
         return p.u64("rate_bps", 1, RateLimiterConfig::kMaxRateBps, c.rate_bps) &&
                p.u64("burst_bytes", 1, RateLimiterConfig::kMaxBurstBytes, c.burst_bytes) &&
                p.uint("max_flows", 1, 1ull << 28, c.max_flows) &&
                p.seconds("idle_timeout_s", c.idle_timeout);
       })},
      {"busy",
       [](Params& p, const toml::table*, std::string&, Plan& plan) -> std::unique_ptr<Nf> {
         uint64_t cycles = 300;
         if (!p.u64("cycles", 0, 100'000'000, cycles) || !p.finish() || !plan.build) return nullptr;
         return std::make_unique<Busy>(cycles);
       }},
      {"macswap",
       [](Params& p, const toml::table*, std::string&, Plan& plan) -> std::unique_ptr<Nf> {
         return p.finish() && plan.build ? std::make_unique<MacSwap>() : nullptr;
       }},
      {"forward",
       [](Params& p, const toml::table*, std::string&, Plan& plan) -> std::unique_ptr<Nf> {
         return p.finish() && plan.build ? std::make_unique<Forward>() : nullptr;
       }},
      // NFs with their own TOML parsers (nf-classify): Cfg::parse(table, cfg, error) + T::create.
      {"router", own_parser<RouterConfig, Router>()},
      {"firewall", own_parser<FirewallConfig, Firewall>()},
      {"meter", own_parser<MeterConfig, Meter>()},
      {"aes", own_parser<AesConfig, Aes>()},
  };
  return m;
}

std::string valid_names() {
  std::string s;
  for (std::string_view n : nf_names()) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

std::vector<std::string_view> nf_names() {
  std::vector<std::string_view> v;
  for (const auto& [k, f] : factories()) v.push_back(k);
  return v;
}

namespace {

// Builds (plan.build) or checks NF `name`. nullptr + error on failure; when only checking,
// nullptr with an empty error means the parameters are good.
std::unique_ptr<Nf> plan_nf(std::string_view name, const toml::table* params, std::string& error,
                            Plan& plan) {
  auto it = factories().find(name);
  if (it == factories().end()) {
    error = "unknown NF '" + std::string(name) + "' (valid names: " + valid_names() + ")";
    return nullptr;
  }
  Params p(name, params);
  std::string own;
  std::unique_ptr<Nf> nf = it->second(p, params, own, plan);
  if (!nf && (plan.build || !p.error.empty() || !own.empty())) {
    if (!p.error.empty())
      error = p.error;
    else if (own.rfind("[nf.", 0) == 0)
      error = own;
    else
      error = "[nf." + std::string(name) + "] " + (own.empty() ? "invalid parameters" : own);
  }
  return nf;
}

}  // namespace

std::unique_ptr<Nf> make_nf(std::string_view name, const toml::table* params, std::string& error) {
  Plan plan;
  return plan_nf(name, params, error, plan);
}

bool check_nf_tables(const toml::table* config, std::string& error) {
  const toml::node* n = config ? config->get("nf") : nullptr;
  if (!n) return true;
  const toml::table* nf_root = n->as_table();
  if (!nf_root) {
    error = "'nf' must be a table of tables ([nf.<name>])";
    return false;
  }
  for (const auto& [k, v] : *nf_root) {
    const std::string name(k.str());
    if (!factories().count(name)) {
      error = "[nf." + name + "]: unknown NF '" + name + "' (valid names: " + valid_names() + ")";
      return false;
    }
    if (!v.is_table()) {
      error = "[nf." + name + "] must be a table, got " + show_toml(v);
      return false;
    }
    Plan plan{false};
    error.clear();
    plan_nf(name, v.as_table(), error, plan);
    if (!error.empty()) return false;
  }
  return true;
}

namespace {

// Builds the chain (plan.build) or checks it and adds up its NFs' memory.
std::unique_ptr<Chain> plan_chain(std::string_view spec, const toml::table* config,
                                  std::string& error, Plan& total) {
  auto chain = std::make_unique<Chain>();
  const toml::table* nf_root = config ? config->get_as<toml::table>("nf") : nullptr;
  if (config && config->contains("nf") && !nf_root) {
    error = "config: 'nf' must be a table of tables ([nf.<name>])";
    return nullptr;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = std::min(spec.find(',', pos), spec.size());
    std::string_view item = spec.substr(pos, comma - pos);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
      item.remove_suffix(1);
    pos = comma + 1;
    if (item.empty()) {
      error =
          "chain '" + std::string(spec) + "': empty NF name (valid names: " + valid_names() + ")";
      return nullptr;
    }
    std::string name(item), arg;
    if (size_t open = item.find('('); open != std::string_view::npos && item.back() == ')') {
      name = std::string(item.substr(0, open));
      arg = std::string(item.substr(open + 1, item.size() - open - 2));
    }
    const toml::table* params = nullptr;
    if (nf_root) {
      if (const toml::node* n = nf_root->get(name)) {
        params = n->as_table();
        if (!params) {
          error = "config: [nf." + name + "] must be a table, got " + show_toml(*n);
          return nullptr;
        }
      }
    }
    toml::table with_arg;
    if (!arg.empty()) {
      char* end = nullptr;
      long long v = std::strtoll(arg.c_str(), &end, 10);
      if (name != "busy" || *end || v < 0) {
        error = "chain: '" + std::string(item) + "': only busy takes an argument, busy(<cycles>)";
        return nullptr;
      }
      if (params) with_arg = *params;
      with_arg.insert_or_assign("cycles", int64_t(v));
      params = &with_arg;
    }
    Plan plan{total.build};
    error.clear();
    std::unique_ptr<Nf> nf = plan_nf(name, params, error, plan);
    if (!error.empty()) return nullptr;
    total.memory += plan.memory;
    if (nf) chain->add(std::move(nf));
  }
  return chain;
}

}  // namespace

std::unique_ptr<Chain> build_chain(std::string_view spec, const toml::table* config,
                                   std::string& error) {
  Plan plan;
  error.clear();
  auto chain = plan_chain(spec, config, error, plan);
  return error.empty() ? std::move(chain) : nullptr;
}

bool check_chain(std::string_view spec, const toml::table* config, std::string& error,
                 uint64_t* memory) {
  Plan plan{false};
  error.clear();
  plan_chain(spec, config, error, plan);
  if (memory) *memory = plan.memory;
  return error.empty();
}

}  // namespace nfpark::nf
