// [park] of a scenario: the keys and rules of `nfpark run`'s [park] (src/dp/run_config.cc), read
// here until the DPDK-free config model (issue 14) gives both one reader. `slices` is the number
// of NF servers in the simulator ([nf_server] servers).
#include <array>

#include "sim/scenario_sections.h"
#include "sim/toml_section.h"

namespace nfpark::sim {

namespace {

bool parse_hex_key(const std::string& hex, std::array<uint8_t, 16>& key) {
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    key[i] = uint8_t(hi << 4 | lo);
  }
  return true;
}

bool parse_no_split(const toml::node* ns, TomlSection& park, const std::string& where,
                    park::NoSplitFilter& f, std::string& err) {
  const toml::table* t = ns->as_table();
  if (!t) return park.fail("no_split", "a table with dst_prefixes, dst_ports, protocols");
  TomlSection s(t, "park.no_split", err, where);
  if (const toml::node* a = s.raw("dst_prefixes")) {
    if (!a->is_array()) return s.fail("dst_prefixes", "an array of prefixes");
    for (auto& e : *a->as_array()) {
      park::Prefix p;
      std::string perr;
      auto v = e.value<std::string>();
      if (!v || !park::parse_prefix(*v, p, perr))
        return s.fail("dst_prefixes", perr.empty() ? "strings" : perr);
      f.dst_prefixes.push_back(p);
    }
  }
  for (const char* name : {"dst_ports", "protocols"}) {
    const bool ports = std::string(name) == "dst_ports";
    if (const toml::node* a = s.raw(name)) {
      if (!a->is_array()) return s.fail(name, "an array of integers");
      for (auto& e : *a->as_array()) {
        auto v = e.value<int64_t>();
        const int64_t max = ports ? 65535 : 255;
        if (!v || *v < 0 || *v > max) return s.fail(name, "integers 0.." + std::to_string(max));
        if (ports)
          f.dst_ports.push_back(uint16_t(*v));
        else
          f.protocols.push_back(uint8_t(*v));
      }
    }
  }
  return s.check_unknown();
}

}  // namespace

bool parse_park(const toml::table& root, const std::string& where, park::ParkConfig& pc,
                std::string& err) {
  TomlSection s(root.get_as<toml::table>("park"), "park", err, where);
  uint32_t slices = 0;
  if (!s.get("min_payload", pc.min_payload) || !s.get("slots", pc.slots) ||
      !s.get("max_exp", pc.max_exp) || !s.get("slices", slices))
    return false;
  if (const toml::node* pb = s.raw("park_bytes")) {
    if (auto v = pb->value<std::string>(); v && *v == "all")
      pc.park_bytes = 0;
    else if (!s.get("park_bytes", pc.park_bytes) || pc.park_bytes == 0)
      return s.fail("park_bytes", "160, 352, another byte count from 1, or \"all\"");
  }
  std::string fmt(park::to_string(pc.format)), key;
  if (!s.get("format", fmt) || !s.get("key", key)) return false;
  auto f = park::parse_tag_format(fmt);
  if (!f) return s.fail("format", "\"nfpark\" or \"payloadpark\"");
  pc.format = *f;
  if (!key.empty()) {
    std::array<uint8_t, 16> k{};
    if (!parse_hex_key(key, k)) return s.fail("key", "32 hex digits (a 128-bit SipHash key)");
    pc.key = k;
  }
  if (const toml::node* ns = s.raw("no_split"))
    if (!parse_no_split(ns, s, where, pc.no_split, err)) return false;
  if (!s.check_unknown()) return false;
  if (pc.slots == 0 || pc.slots > (1u << 24))
    return s.fail("slots", "an integer from 1 to 16777216");
  if (pc.max_exp == 0) return s.fail("max_exp", "an integer from 1 to 255");
  if (slices > 1) return s.fail("slices", "[nf_server] servers instead (one slice per NF server)");
  return true;
}

}  // namespace nfpark::sim
