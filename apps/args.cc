#include "args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace nfpark::app {

Args::Args(std::string command, std::string description)
    : command_(std::move(command)), description_(std::move(description)) {}

Args& Args::option(const std::string& n, const std::string& m, const std::string& h,
                   const std::string& d) {
  specs_.push_back({n, m, h, d, Spec::kOption, {}, false});
  return *this;
}
Args& Args::flag(const std::string& n, const std::string& h) {
  specs_.push_back({n, "", h, "", Spec::kFlag, {}, false});
  return *this;
}
Args& Args::repeated(const std::string& n, const std::string& m, const std::string& h) {
  specs_.push_back({n, m, h, "", Spec::kRepeated, {}, false});
  return *this;
}
Args& Args::positional(const std::string& n, const std::string& h) {
  pos_specs_.emplace_back(n, h);
  return *this;
}
Args& Args::epilog(const std::string& t) {
  epilog_ = t;
  return *this;
}

Args::Spec* Args::find(const std::string& n) {
  for (Spec& s : specs_)
    if (s.name == n) return &s;
  return nullptr;
}
const Args::Spec* Args::find(const std::string& n) const {
  for (const Spec& s : specs_)
    if (s.name == n) return &s;
  return nullptr;
}

bool Args::parse(int argc, char** argv, int first) {
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (!options_done && (a == "--help" || a == "-h")) {
      help_ = true;
      return true;
    }
    if (!options_done && a == "--") {
      options_done = true;
      continue;
    }
    if (options_done || a.size() < 2 || a[0] != '-' || (a[1] != '-' && !std::isalpha(a[1]))) {
      positionals_.push_back(a);  // includes "-" and negative numbers
      continue;
    }
    if (a[1] != '-') {
      error_ = "unknown option '" + a + "' (options are long: --name; see " + command_ + " --help)";
      return false;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    Spec* s = find(name);
    if (!s) {
      error_ = "unknown option '--" + name + "' (see " + command_ + " --help)";
      return false;
    }
    if (s->kind == Spec::kFlag) {
      if (inline_value) {
        error_ = "--" + name + " is a flag and takes no value";
        return false;
      }
      s->seen = true;
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        error_ = "--" + name + " needs a value (" + s->metavar + ")";
        return false;
      }
      value = argv[++i];
    }
    if (s->kind == Spec::kOption && s->seen) {
      error_ = "--" + name + " given twice";
      return false;
    }
    s->seen = true;
    s->values.push_back(value);
  }
  if (positionals_.size() > pos_specs_.size()) {
    error_ = "unexpected argument '" + positionals_[pos_specs_.size()] + "' (see " + command_ +
             " --help)";
    return false;
  }
  if (positionals_.size() < pos_specs_.size()) {
    error_ = "missing " + pos_specs_[positionals_.size()].first + " (see " + command_ + " --help)";
    return false;
  }
  return true;
}

bool Args::has(const std::string& n) const {
  const Spec* s = find(n);
  return s && s->seen;
}
std::string Args::get(const std::string& n) const {
  const Spec* s = find(n);
  if (!s) return "";
  return s->values.empty() ? s->def : s->values.back();
}
std::vector<std::string> Args::all(const std::string& n) const {
  const Spec* s = find(n);
  return s ? s->values : std::vector<std::string>{};
}

bool Args::get_u64(const std::string& n, uint64_t& out) {
  std::string v = get(n);
  if (v.empty() && !has(n)) return true;  // no default: leave `out` as is
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || *end || errno) {
    error_ = "--" + n + ": '" + v + "' is not an integer >= 0";
    return false;
  }
  out = x;
  return true;
}
bool Args::get_double(const std::string& n, double& out) {
  std::string v = get(n);
  if (v.empty() && !has(n)) return true;
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !std::isfinite(x)) {
    error_ = "--" + n + ": '" + v + "' is not a number";
    return false;
  }
  out = x;
  return true;
}

std::string Args::usage() const {
  std::string u = "usage: " + command_;
  if (!specs_.empty()) u += " [options]";
  for (auto& p : pos_specs_) u += " " + p.first;
  u += "\n\n" + description_ + "\n";
  if (!pos_specs_.empty()) {
    u += "\nArguments:\n";
    for (auto& p : pos_specs_)
      u += "  " + p.first + std::string(p.first.size() < 22 ? 22 - p.first.size() : 1, ' ') +
           p.second + "\n";
  }
  u += "\nOptions:\n";
  for (const Spec& s : specs_) {
    std::string left = "--" + s.name + (s.metavar.empty() ? "" : " " + s.metavar);
    std::string help = s.help;
    if (s.kind == Spec::kOption && !s.def.empty()) help += " (default " + s.def + ")";
    if (s.kind == Spec::kRepeated) help += " (repeatable)";
    u += "  " + left + std::string(left.size() < 22 ? 22 - left.size() : 1, ' ') + help + "\n";
  }
  u += "  --help                print this help\n";
  if (!epilog_.empty()) u += "\n" + epilog_ + "\n";
  return u;
}

}  // namespace nfpark::app
