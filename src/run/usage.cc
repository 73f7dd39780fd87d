#include "run/usage.h"

namespace nfpark::run {

namespace {

// The accepted values, shorter than expected(): "1..255 traversals", "baseline | host | ...".
std::string values(const Setting& s) {
  auto num = [](double v) {
    if (v >= 1.8e19) return std::string("2^64-1");
    std::string t = std::to_string(v);
    if (v == double(uint64_t(v))) return std::to_string(uint64_t(v));
    t.erase(t.find_last_not_of('0') + 1);
    return t;
  };
  const std::string unit = s.unit.empty() ? "" : " " + std::string(s.unit);
  switch (s.kind) {
    case Kind::kBool:
      return "true | false";
    case Kind::kInt:
    case Kind::kReal:
      return num(s.min) + ".." + num(s.max) + unit;
    case Kind::kIntOrAll:
      return "all | " + num(s.min) + ".." + num(s.max) + unit;
    case Kind::kText:
      return "string";
    case Kind::kChoice: {
      std::string v(s.choices);
      for (size_t i = v.find('|'); i != std::string::npos; i = v.find('|', i + 3))
        v.replace(i, 1, " | ");
      return v;
    }
    case Kind::kKey:
      return "32 hex digits";
    case Kind::kPorts:
      return "two port specs";
    case Kind::kInts:
      return "list of " + num(s.min) + ".." + num(s.max);
    case Kind::kPrefixes:
      return "list of IP prefixes";
  }
  return "";
}

std::string file_key(const Setting& s) {
  return "[" + std::string(s.section) + "] " + std::string(s.key);
}

}  // namespace

std::string flag_help(const Setting& s) {
  std::string h = std::string(s.help) + " (";
  if (s.kind != Kind::kBool) h += values(s) + "; ";
  if (!s.def.empty()) h += "default " + std::string(s.def) + "; ";
  return h + file_key(s) + ")";
}

std::string settings_markdown() {
  std::string md =
      "| file | flag | values | default | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const Setting& s : settings()) {
    std::string flag = s.flag.empty() ? "—" : "`--" + std::string(s.flag);
    if (!s.flag.empty()) flag += s.kind == Kind::kBool ? "`" : " " + std::string(s.metavar) + "`";
    std::string vals = values(s);
    for (size_t i = vals.find('|'); i != std::string::npos; i = vals.find('|', i + 2))
      vals.replace(i, 1, "\\|");
    md += "| `" + file_key(s) + "` | " + flag + " | " + vals + " | " +
          (s.def.empty() ? "—" : std::string(s.def)) + " | " + std::string(s.help) + " |\n";
  }
  return md;
}

std::string sim_only_text() {
  std::string keys;
  for (const Setting& s : settings())
    if (s.sim_only) keys += (keys.empty() ? "" : ", ") + file_key(s);
  return keys.empty()
             ? ""
             : "Settings of the simulator only (nfpark sim scenarios; refused here): " + keys +
                   ".\n";
}

std::string exit_codes_text() {
  return "Exit codes: 0 complete (every invariant held) · 1 an invariant broke or the run failed "
         "·\n"
         "2 bad input (flag, config, trace, port; nothing written) · 3 interrupted (SIGINT,\n"
         "SIGTERM or --timeout cut it short; packets in flight counted as abandoned_at_exit).\n";
}

}  // namespace nfpark::run
