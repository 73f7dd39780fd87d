// Named counters: how elements report what they did, without a registry or globals.
// Elements keep plain uint64_t members on the hot path and list them on demand through a
// CounterSink (a callback), so engines can print, JSON-encode or sum them.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace nfpark {

using CounterSink = std::function<void(std::string_view name, uint64_t value)>;

// A simple ordered map of counters, for aggregation and tests.
struct CounterMap {
  std::map<std::string, uint64_t, std::less<>> values;
  CounterSink sink(std::string prefix = {}) {
    return [this, prefix](std::string_view n, uint64_t v) { values[prefix + std::string(n)] += v; };
  }
  uint64_t get(std::string_view name) const {
    auto it = values.find(name);
    return it == values.end() ? 0 : it->second;
  }
};

}  // namespace nfpark
