#include "nf/toml_show.h"

#include <toml++/toml.h>

#include <sstream>

namespace nfpark::nf {

std::string show_toml(const toml::node& n) {
  std::string s;
  if (const toml::array* a = n.as_array()) {
    for (const toml::node& e : *a) s += (s.empty() ? "[ " : ", ") + show_toml(e);
    return s.empty() ? "[]" : s + " ]";
  }
  if (const toml::table* t = n.as_table()) {
    for (const auto& [k, v] : *t)
      s += (s.empty() ? "{ " : ", ") + std::string(k.str()) + " = " + show_toml(v);
    return s.empty() ? "{}" : s + " }";
  }
  std::ostringstream os;
  n.visit([&](const auto& v) { os << v; });
  return os.str();
}

}  // namespace nfpark::nf
