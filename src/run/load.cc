#include "run/load.h"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "nf/registry.h"
#include "nf/toml_show.h"

namespace nfpark::run {

namespace fs = std::filesystem;

namespace {

Given given_of(const toml::node& n) {
  Given g;
  g.shown = nf::show_toml(n);
  if (auto b = n.as_boolean())
    g.b = b->get();
  else if (auto i = n.as_integer())
    g.i = i->get();
  else if (auto d = n.as_floating_point())
    g.d = d->get();
  else if (auto s = n.as_string())
    g.s = s->get();
  else if (auto a = n.as_array()) {
    g.list.emplace();
    for (const toml::node& e : *a) g.list->push_back(given_of(e));
  }
  return g;
}

std::string keys_of(std::string_view section, bool sim) {
  std::string v;
  for (const Setting& s : settings())
    if (s.section == section && (sim || !s.sim_only))
      v += (v.empty() ? "" : ", ") + std::string(s.key);
  for (std::string_view sub : sections())
    if (sub.size() > section.size() && sub.substr(0, section.size()) == section &&
        sub[section.size()] == '.')
      v += (v.empty() ? "" : ", ") + std::string(sub.substr(section.size() + 1));
  return v;
}

bool known_section(std::string_view name) {
  for (std::string_view s : sections())
    if (s == name) return true;
  return false;
}

std::string top_sections() {
  std::string v;
  for (std::string_view s : sections())
    if (s.find('.') == std::string_view::npos) v += std::string(s) + ", ";
  return v + "nf.NAME";
}

}  // namespace

Loader::Loader(For who) : for_(who) {
  std::string why;
  for (const Setting& s : settings()) {
    const std::string_view def = who == For::kSim && !s.sim_def.empty() ? s.sim_def : s.def;
    if (def.empty()) continue;
    Value v;
    if (decode_text(s, def, v, why)) s.apply(cfg_, v);
  }
}

bool Loader::apply(const Setting& s, Value v, char origin) {
  if (origin == 'f' && s.section == "run" && (s.key == "in" || s.key == "out") && !v.s.empty() &&
      !fs::path(v.s).is_absolute() && !dir_.empty())
    v.s = (fs::path(dir_) / v.s).string();
  s.apply(cfg_, v);
  origin_[&s] = origin;
  return true;
}

bool Loader::load_file(const std::string& path, std::string& err) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return (err = path + ": no such file"), false;
  if (fs::is_directory(st)) return (err = path + ": is a directory, expected a TOML file"), false;
  if (!fs::is_regular_file(st)) return (err = path + ": not a regular file"), false;
  std::ifstream f(path, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  if (!f) return (err = path + ": cannot read it"), false;
  dir_ = fs::path(path).parent_path().string();
  return load_string(text.str(), path, err);
}

bool Loader::load_string(std::string_view text, const std::string& name, std::string& err) {
  std::shared_ptr<toml::table> root;
  try {
    root = std::make_shared<toml::table>(toml::parse(text, name));
  } catch (const toml::parse_error& e) {
    std::string what(e.description());
    for (char& c : what)  // toml++ may quote the text it choked on, newlines included
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    err = name + ":" + std::to_string(e.source().begin.line) + ": " + what;
    return false;
  }
  return load_root(std::move(root), name, err);
}

// Walks one table: sub-tables that are sections of their own, then settings.
bool Loader::walk(const toml::table& t, const std::string& section, const std::string& name,
                  std::string& err) {
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    const std::string sub = section + "." + key;
    if (node.is_table() && known_section(sub)) {
      if (!walk(*node.as_table(), sub, name, err)) return false;
      continue;
    }
    const Setting* s = find_setting(section, key);
    if (!s) {
      err = name + ": [" + section + "] unknown key '" + key +
            "' (valid keys: " + keys_of(section, for_ == For::kSim) + ")";
      return false;
    }
    if (s->sim_only && for_ != For::kSim) {
      err = name + ": [" + section + "] " + key + ": a setting of the simulator only (nfpark sim)";
      return false;
    }
    Value v;
    std::string why;
    if (!decode_given(*s, given_of(node), v, why)) {
      err = name + ": [" + section + "] " + key + ": " + why;
      return false;
    }
    apply(*s, std::move(v), 'f');
  }
  return true;
}

bool Loader::load_sections(const toml::table& root, const std::string& name,
                           std::initializer_list<std::string_view> only, std::string& err) {
  file_ = name;
  for (std::string_view sec : only) {
    const toml::node* node = root.get(sec);
    if (!node) continue;
    if (!known_section(sec))
      return (err = name + ": [" + std::string(sec) + "] is not a section of nfpark run"), false;
    if (!node->is_table())
      return (err = name + ": '" + std::string(sec) + "' must be a table"), false;
    if (!walk(*node->as_table(), std::string(sec), name, err)) return false;
  }
  return true;
}

bool Loader::load_root(std::shared_ptr<toml::table> root, const std::string& name,
                       std::string& err) {
  file_ = name;
  cfg_.source = name;
  for (const auto& [k, node] : *root) {
    const std::string key(k.str());
    if (key == "nf") {
      if (!node.is_table())
        return (err = name + ": 'nf' must be a table of [nf.NAME] tables"), false;
      continue;
    }
    if (!known_section(key) || key.find('.') != std::string::npos) {
      err = name + ": unknown section [" + key + "] (expected " + top_sections() + ")";
      return false;
    }
    if (!node.is_table())
      return (err = name + ": '" + key + "' must be a table ([" + key + "])"), false;
    if (!walk(*node.as_table(), key, name, err)) return false;
  }
  std::string nerr;
  if (!nf::check_nf_tables(root.get(), nerr)) return (err = name + ": " + nerr), false;
  cfg_.nf_config = std::move(root);
  return true;
}

bool Loader::set_flag(const Setting& s, std::optional<std::string_view> text, std::string& err) {
  Value v;
  std::string why;
  if (!text) {
    if (s.kind != Kind::kBool) return (err = "--" + std::string(s.flag) + " needs a value"), false;
    v.b = s.flag_sets;
  } else if (!decode_text(s, *text, v, why)) {
    err = "--" + std::string(s.flag) + ": " + why;
    return false;
  }
  return apply(s, std::move(v), 'c');
}

std::string Loader::where(const Setting& s) const {
  auto it = origin_.find(&s);
  const std::string key = "[" + std::string(s.section) + "] " + std::string(s.key);
  if (it != origin_.end() && it->second == 'c') return "--" + std::string(s.flag);
  if (it != origin_.end()) return file_ + ": " + key;
  return s.flag.empty() ? key : key + " (--" + std::string(s.flag) + ")";
}

std::string Loader::where(std::string_view section, std::string_view key) const {
  const Setting* s = find_setting(section, key);
  return s ? where(*s) : "[" + std::string(section) + "] " + std::string(key);
}

bool Loader::given(std::string_view section, std::string_view key) const {
  const Setting* s = find_setting(section, key);
  return s && origin_.count(s);
}

bool Loader::check_roles(std::string& err) const {
  const RunConfig& c = cfg_;
  if (c.role == Role::kNf) {
    if (c.port.empty())
      return (err = "role nf needs the port to the switch: --port vdev:net_memif0,role=client,..."),
             false;
    return true;
  }
  if (c.role == Role::kSwitch && c.nf_port.empty())
    return (err =
                "role switch needs the port to the NF server: --nf-port "
                "vdev:net_memif0,role=server,..."),
           false;
  if (c.role == Role::kSwitch) {
    const auto ports = nf_ports(c);
    for (const std::string& p : ports)
      if (p.empty())
        return (err = where("run", "nf_port") + ": an empty port spec in '" + c.nf_port +
                      "'; give one spec per NF server, joined by +"),
               false;
    if (ports.size() != c.nf_servers)
      return (err = where("run", "nf_port") + ": " + std::to_string(ports.size()) +
                    " NF port(s) for " + std::to_string(c.nf_servers) + " NF server(s) (" +
                    where("nf_servers", "count") + "); give one port spec per server, joined by +"),
             false;
  }
  const bool live = !c.traffic_ports.empty();
  if (live && (!c.in_path.empty() || !c.out_path.empty()))
    return (err = where("run", "traffic") + ": live traffic replaces " +
                  (c.in_path.empty() ? where("run", "out") : where("run", "in")) +
                  "; give one or the other"),
           false;
  if (!live && c.in_path.empty())
    return (err = "no input: give --in FILE.pcap or --traffic A+B (or [run] in = \"...\")"), false;
  return true;
}

// An --out that is the input (or the config file), through any symlink or hard link, would be
// truncated while it is read: refused. So is an --out that is a directory.
bool Loader::check_files(std::string& err) const {
  const RunConfig& c = cfg_;
  if (c.out_path.empty()) return true;
  std::error_code ec;
  if (fs::is_directory(c.out_path, ec))
    return (err = where("run", "out") + ": " + c.out_path + " is a directory"), false;
  auto same = [&](const std::string& other) {
    if (other.empty()) return false;
    std::error_code e1, e2;
    if (fs::exists(c.out_path, e1) && fs::exists(other, e2))
      return fs::equivalent(c.out_path, other, e1);
    return fs::weakly_canonical(c.out_path, e1) == fs::weakly_canonical(other, e2) && !e1 && !e2;
  };
  if (same(c.in_path))
    return (err = where("run", "out") + ": " + c.out_path + " is the input (" + c.in_path +
                  "); write the output to another file"),
           false;
  if (same(file_))
    return (err = where("run", "out") + ": " + c.out_path + " is the config file"), false;
  return true;
}

bool Loader::check_queuemem(std::string& err) const {
  const park::QueueMemConfig& q = cfg_.queuemem;
  if (q.slices > q.queues)
    return (err = where("queuemem", "slices") + ": expected at most queues (" +
                  std::to_string(q.queues) + "), got " + std::to_string(q.slices) +
                  "; each slice needs at least one queue"),
           false;
  if (std::string e = q.validate(); !e.empty()) return (err = e), false;
  return true;
}

// The Reframer box: an lcore of its own in front of the NF server's chain, in the process that
// runs the chain (docs/reframer.md, Placement).
bool Loader::check_box(std::string& err) const {
  const RunConfig& c = cfg_;
  const std::string at = where("reframe", "placement") + ": box";
  if (c.reframe_us <= 0)
    return (err = at + " needs Reframer on: give --reframe T_US ([run] reframe_us)"), false;
  if (c.role == Role::kSwitch)
    return (err = at +
                  " runs in front of the NF chain, in the process that runs it: give it to "
                  "the --role nf process (this switch's NF server is that process)"),
           false;
  return true;
}

bool Loader::finish(std::string& err) {
  const RunConfig& c = cfg_;
  std::string nerr;
  if (!nf::check_chain(c.chain, c.nf_config.get(), nerr))
    return (err = where("run", "chain") + ": " + nerr), false;
  // Several NF servers: one PayloadPark slice and one QUEUE-MEM port (its queues) per server.
  if (c.nf_servers > 1) {
    if (given("park", "slices") && c.park.slices != c.nf_servers)
      return (err = where("park", "slices") + ": " + std::to_string(c.park.slices) +
                    " slices for " + std::to_string(c.nf_servers) + " NF servers (" +
                    where("nf_servers", "count") + "); leave it out: each server has its slice"),
             false;
    cfg_.park.slices = uint8_t(c.nf_servers);
    cfg_.queuemem.ports = uint8_t(c.nf_servers);
    cfg_.queuemem.port_per_server = true;
  }
  if (!check_queuemem(err)) return false;
  // Reframer lets later headers overtake a held one for up to T_buff: QUEUE-MEM must not take
  // that wait for a lost header.
  if (c.mode == Mode::kQueueMem && c.reframe_us > 0 &&
      double(c.queuemem.lost_after) <= c.reframe_us * 1e3)
    return (err = where("queuemem", "lost_after_us") + ": expected more than --reframe (" +
                  std::to_string(int64_t(c.reframe_us)) + " us), got " +
                  std::to_string(c.queuemem.lost_after / 1000) +
                  "; Reframer's hold is not a lost header"),
           false;
  if (auto e = park::check(c.slicer)) return (err = *e), false;
  if (c.reframe_us > 0) {  // the fields' ranges are the table's; this checks how they combine
    reframe::ReorderConfig rc = c.reframe.cfg;
    rc.t_buff = Nanos(c.reframe_us * 1e3);
    if (!rc.max_held_packets) rc.max_held_packets = 16384;
    if (std::string e = rc.validate(); !e.empty()) return (err = "[reframe]: " + e), false;
  }
  if (c.reframe.placement == Placement::kBox && !check_box(err)) return false;
  return check_roles(err) && check_files(err) && apply_keys(err);
}

// A tag key in a mode whose tags carry no MAC is refused; then derive_keys(). The NF side
// (role nf) validates nothing and needs no keys.
bool Loader::apply_keys(std::string& err) {
  RunConfig& c = cfg_;
  if (c.role == Role::kNf) return true;
  if (c.park.key && c.mode != Mode::kPayloadPark && c.mode != Mode::kQueueMem) {
    err = where("park", "key") + ": ";
    if (c.mode == Mode::kNfSlicer)
      err +=
          "nfslicer's 8-byte token has no room for a MAC, so it takes no tag key (its "
          "generations are keyed by the run's secret: --secret HEX)";
    else
      err += "mode " + std::string(to_string(c.mode)) +
             " issues no tags (tag keys apply to payloadpark and queuemem)";
    return false;
  }
  return derive_keys(c, err);
}

bool derive_keys(RunConfig& c, std::string& err) {
  if (!c.secret) {
    park::Key128 s{};
    if (!park::os_random_key(s, err)) return false;
    c.secret = s;
  }
  const park::Key128& s = *c.secret;
  if (!c.park.key) {
    c.park.key = park::derive_key(s, park::kLabelParkTag);
    c.queuemem.key = park::derive_key(s, park::kLabelQueueMemTag);
  } else {
    c.queuemem.key = c.park.key;  // the user's tag key, for whichever mode uses tags
  }
  c.slicer.key = park::derive_key(s, park::kLabelSlicerGen);
  return true;
}

}  // namespace nfpark::run
