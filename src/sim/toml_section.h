// TomlSection: typed reads from one table of a scenario file, with errors that name the file,
// the section and the key, and unknown keys rejected (a typo must not fall back to a default).
// Only scenario.cc and the files it delegates to include this (it pulls in toml++).
#pragma once
#include <toml++/toml.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

namespace nfpark::sim {

class TomlSection {
 public:
  TomlSection(const toml::table* t, std::string name, std::string& err, std::string where)
      : t_(t), name_(std::move(name)), err_(err), where_(std::move(where)) {}

  template <typename T>
  bool get(const char* key, T& out) {
    seen_.insert(key);
    const toml::node* n = t_ ? t_->get(key) : nullptr;
    if (!n) return true;
    if constexpr (std::is_same_v<T, bool>) {
      if (auto v = n->value<bool>()) return out = *v, true;
      return fail(key, "true or false");
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = n->value<std::string>()) return out = *v, true;
      return fail(key, "a string");
    } else if constexpr (std::is_floating_point_v<T>) {
      auto v = n->value<double>();
      if (v && std::isfinite(*v) && *v >= 0) return out = T(*v), true;
      return fail(key, "a number >= 0");
    } else {
      auto v = n->value<int64_t>();
      if (v && *v >= 0 && uint64_t(*v) <= uint64_t(std::numeric_limits<T>::max()))
        return out = T(*v), true;
      return fail(key, "an integer from 0 to " + std::to_string(std::numeric_limits<T>::max()));
    }
  }
  // A duration given in `unit` picoseconds (e.g. kMs for a key named *_ms).
  template <typename P>
  bool get_time(const char* key, P& out, P unit) {
    double v = -1;
    if (!get(key, v)) return false;
    if (v < 0) return true;  // absent: the default stays
    // simulated time is int64 picoseconds: a longer time did not fit (its conversion wrapped)
    if (v * double(unit) >= double(std::numeric_limits<P>::max()))
      return fail(key, "a time below 106 days (the simulator counts int64 picoseconds)");
    out = P(v * double(unit) + 0.5);
    return true;
  }
  const toml::node* raw(const char* key) {
    seen_.insert(key);
    return t_ ? t_->get(key) : nullptr;
  }
  bool fail(const std::string& key, const std::string& expected) {
    err_ = where_ + ": [" + name_ + "] " + key + ": expected " + expected;
    return false;
  }
  // "[section] key: message" (a message that is not "expected ...").
  bool error(const std::string& key, const std::string& message) {
    err_ = where_ + ": [" + name_ + "] " + key + ": " + message;
    return false;
  }
  bool check_unknown() {
    if (!t_) return true;
    for (auto& [k, v] : *t_) {
      if (!seen_.count(std::string(k.str()))) {
        err_ = where_ + ": [" + name_ + "] unknown key '" + std::string(k.str()) +
               "' (see docs/sim.md for the keys of [" + name_ + "])";
        return false;
      }
    }
    return true;
  }

 private:
  const toml::table* t_;
  std::string name_;
  std::string& err_;
  std::string where_;
  std::set<std::string> seen_;
};

}  // namespace nfpark::sim
