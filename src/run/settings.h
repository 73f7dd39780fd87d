// Settings: every setting of `nfpark run`, declared once — its name, TOML section and key,
// command-line flag, kind, range, unit, default and help — and decoded once: a flag's text and
// a TOML value go through the same decode() and fail with the same message ("expected an
// integer from 1 to 255, got 0"); only the place named in front differs ("--max-exp" or
// "run.toml: [park] max_exp"). `nfpark run --help` and the settings table of docs/run.md are
// generated from this table (usage.h), and the defaults a run starts from are applied from it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "run/run_config.h"

namespace nfpark::run {

enum class Kind : uint8_t {
  kBool,      // true/false; its flag takes no value and sets `flag_sets`
  kInt,       // an integer in [min, max]
  kReal,      // a finite number in [min, max] (no nan, no inf)
  kText,      // a string (paths, port specs, the chain)
  kChoice,    // one of `choices` (separated by '|')
  kKey,       // 32 hex digits (a 128-bit key)
  kPorts,     // two port specs: flag "A+B", file ["A", "B"]
  kIntOrAll,  // "all" or an integer in [min, max]
  kInts,      // a list of integers in [min, max]: flag "53,123", file [53, 123]
  kPrefixes,  // a list of IP prefixes: flag "192.0.2.0/24,2001:db8::/32", file ["..."]
};

// A decoded value: the field that matches the setting's kind is set.
struct Value {
  bool b = false;
  uint64_t u = 0;  // kInt, kIntOrAll (0 = "all")
  double d = 0;
  std::string s;                  // kText, kChoice, kKey
  std::vector<std::string> list;  // kPorts, kPrefixes
  std::vector<uint64_t> ints;     // kInts
};

struct Setting {
  std::string_view section;  // TOML table: "run", "park", "park.no_split", ...
  std::string_view key;      // key in that table
  std::string_view flag;     // command-line flag without "--" ("" = file only)
  Kind kind;
  double min = 0, max = 0;   // kInt, kReal, kIntOrAll, kInts
  std::string_view unit;     // "bytes", "s", "µs", "packets", ...
  std::string_view def;      // default as written in a file ("" = unset)
  std::string_view help;     // one line
  std::string_view choices;  // kChoice: "a|b|c"
  bool flag_sets = true;     // kBool: what the bare flag sets (false for --no-progress)
  std::string_view metavar;  // flag's value placeholder in --help
  // Stores a decoded value into the config. May refine it (e.g. a path relative to a file).
  void (*apply)(RunConfig&, const Value&) = nullptr;
  // The simulator's default where it differs ("" = `def`): e.g. QUEUE-MEM's P4 sizes.
  std::string_view sim_def = {};
  // A setting of the simulator only (nfpark sim's scenarios): nfpark run refuses it.
  bool sim_only = false;

  std::string name() const { return std::string(section) + "." + std::string(key); }
};

// Every setting, grouped by section, in the order of docs/run.md.
std::span<const Setting> settings();
// The setting at [section] key, or nullptr.
const Setting* find_setting(std::string_view section, std::string_view key);
// The setting behind --flag, or nullptr.
const Setting* find_flag(std::string_view flag);
// Every TOML section the table knows ("run", "park", ...; "nf" is handled by the NF registry).
std::vector<std::string_view> sections();

// What a value must look like, e.g. "an integer from 1 to 255 (table traversals)".
std::string expected(const Setting& s);
// Decodes a flag's text. False with `why` = "expected ..., got ..." when it does not fit.
bool decode_text(const Setting& s, std::string_view text, Value& out, std::string& why);
// A TOML value, seen through what it holds (toml++ stays in load.cc): exactly one is set.
struct Given {
  std::optional<bool> b;
  std::optional<int64_t> i;
  std::optional<double> d;
  std::optional<std::string> s;
  std::optional<std::vector<Given>> list;
  std::string shown;  // the value as written, for messages
};
bool decode_given(const Setting& s, const Given& g, Value& out, std::string& why);

}  // namespace nfpark::run
