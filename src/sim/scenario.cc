#include "sim/scenario.h"

#include <toml++/toml.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "sim/scenario_sections.h"

namespace nfpark::sim {

namespace {

constexpr const char* kSections[] = {"sim",      "traffic", "switch", "nf_server", "park",
                                     "nf",       "variant", "sweep",  "quick",     "queuemem",
                                     "nfslicer", "nicmem",  "faults", "reframe"};

// The value of a TOML node as a JSON literal (for the report's params).
std::string json_literal(const toml::node& n) {
  if (auto v = n.value_exact<int64_t>()) return std::to_string(*v);
  if (auto v = n.value_exact<double>()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", *v);
    return b;
  }
  if (auto v = n.value_exact<bool>()) return *v ? "true" : "false";
  if (auto v = n.value_exact<std::string>()) {
    std::string q = "\"";
    for (char c : *v) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  }
  std::ostringstream o;
  o << toml::json_formatter{n};
  return o.str();
}

// Sets root[a][b]... = value for the dotted path "a.b"; false when the path is not one of the
// file's sections.
bool set_path(toml::table& root, const std::string& path, const toml::node& value,
              std::string& err) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size()) {
    err = "'" + path + "': expected \"section.key\" (e.g. \"traffic.size\")";
    return false;
  }
  toml::table* t = &root;
  std::string rest = path.substr(0, dot);
  for (size_t start = 0;;) {
    const size_t d = rest.find('.', start);
    const std::string part = rest.substr(start, d == std::string::npos ? d : d - start);
    if (t == &root && part != "sim" && part != "traffic" && part != "switch" &&
        part != "nf_server" && part != "park" && part != "nf" && part != "nfslicer" &&
        part != "nicmem" && part != "faults" && part != "reframe") {
      err = "'" + path + "': '" + part + "' is not a section that can be overridden";
      return false;
    }
    auto [it, ok] = t->insert(part, toml::table{});
    t = it->second.as_table();
    if (!t) {
      err = "'" + path + "': '" + part + "' is not a table";
      return false;
    }
    if (d == std::string::npos) break;
    start = d + 1;
  }
  t->insert_or_assign(path.substr(dot + 1), value);
  return true;
}

struct Point {  // one sweep point: (path, value) pairs
  std::vector<std::pair<std::string, const toml::node*>> values;
};

bool sweep_points(const toml::table* sweep, const std::string& file, std::vector<Point>& out,
                  std::string& err) {
  out = {Point{}};
  if (!sweep) return true;
  for (auto& [k, v] : *sweep) {
    const toml::array* a = v.as_array();
    if (!a || a->empty()) {
      err = file + ": [sweep] " + std::string(k.str()) + ": expected a non-empty array of values";
      return false;
    }
    std::vector<Point> next;
    for (const Point& p : out)
      for (const toml::node& val : *a) {
        Point q = p;
        q.values.emplace_back(std::string(k.str()), &val);
        next.push_back(q);
      }
    out = std::move(next);
  }
  return true;
}

}  // namespace

bool load_scenario(const std::string& path, bool quick, Scenario& out, std::string& err) {
  if (std::filesystem::is_directory(path))
    return err = path + ": is a directory, not a scenario", false;
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    err = path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description());
    return false;
  }
  for (auto& [k, v] : root) {
    bool known = false;
    for (const char* s : kSections) known |= k.str() == s;
    if (!known) {
      err =
          path + ": unknown section [" + std::string(k.str()) +
          "] (expected sim, traffic, switch, nf_server, park, queuemem, nfslicer, nicmem, faults, "
          "reframe, nf.NAME, variant, sweep, quick)";
      return false;
    }
  }
  if (quick) {
    if (const toml::table* q = root.get_as<toml::table>("quick")) {
      const toml::table quick_table = *q;  // a copy: root changes below
      for (auto& [k, v] : quick_table) {
        if (k.str() == "sweep") {  // [quick.sweep] replaces [sweep]
          if (!v.is_table()) return err = path + ": [quick] sweep must be a table", false;
          root.insert_or_assign("sweep", v);
        } else if (!set_path(root, std::string(k.str()), v, err)) {
          return err = path + ": [quick] " + err, false;
        }
      }
    }
  }
  out = Scenario{};
  out.path = path;
  if (const toml::table* s = root.get_as<toml::table>("sim")) {
    out.name = s->get("name") ? s->get("name")->value_or(std::string()) : "";
    out.description = s->get("description") ? s->get("description")->value_or(std::string()) : "";
  }
  if (out.name.empty()) out.name = std::filesystem::path(path).stem().string();
  std::vector<Point> points;
  if (!sweep_points(root.get_as<toml::table>("sweep"), path, points, err)) return false;
  const toml::array* variants = root.get_as<toml::array>("variant");
  if (root.contains("variant") && (!variants || !variants->is_array_of_tables()))
    return err = path + ": variant must be an array of tables ([[variant]])", false;
  const size_t nv = variants ? variants->size() : 1;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  for (const Point& pt : points) {
    for (size_t vi = 0; vi < nv; ++vi) {
      toml::table run = root;
      SimRunConfig c;
      std::string where = path;
      for (auto& [k, v] : pt.values) {
        if (!set_path(run, k, *v, err)) return err = path + ": [sweep] " + err, false;
        c.params.emplace_back(k, json_literal(*v));
        where += (where == path ? " (" : ", ") + k + " = " + json_literal(*v);
      }
      if (variants) {
        const toml::table& v = *(*variants)[vi].as_table();
        std::string name = v.get("name") ? v.get("name")->value_or(std::string()) : "";
        if (name.empty()) name = "variant" + std::to_string(vi + 1);
        c.params.insert(c.params.begin(),
                        {"variant", json_literal(toml::value<std::string>(name))});
        where += (where == path ? " (" : ", ") + std::string("variant ") + name;
        for (auto& [k, val] : v) {
          const std::string key(k.str());
          if (key == "name") continue;
          if (!set_path(run, key == "mode" ? "sim.mode" : key, val, err))
            return err = path + ": [[variant]] " + name + ": " + err, false;
          if (key != "mode") c.params.emplace_back(key, json_literal(val));
        }
      }
      if (where != path) where += ")";
      if (!parse_run(run, where, dir, c, err)) return false;
      auto params = std::make_shared<toml::table>(run);
      c.nf_params = params;
      c.label = out.name;
      for (auto& [k, v] : c.params) c.label += " " + k + "=" + v;
      out.runs.push_back(std::move(c));
    }
  }
  return true;
}

}  // namespace nfpark::sim
