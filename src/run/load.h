// Loader: builds a RunConfig through the settings table — its defaults first, then a TOML file,
// then command-line flags (each overrides the one before) — and checks it once (finish()).
//
//   run::Loader l;
//   if (!l.load_file("run.toml", err) || !l.set_flag(*run::find_flag("slots"), "4096", err) ||
//       !l.finish(err)) { print(err); exit(2); }
//   use(l.config());
//
// Every error is one line naming where the bad value came from and what it must be:
//   "run.toml: [park] slots: expected an integer from 1 to 4194304 (slots), got 0"
//   "--slots: expected an integer from 1 to 4194304 (slots), got 0"
// Unknown sections and keys are errors wherever they are, and every [nf.NAME] table is checked
// against the NF registry whether or not NAME is in the chain. A directory, a missing file or
// a file that is not TOML is an error. No DPDK, nothing allocated beyond the config itself: the
// simulator loads the same files.
#pragma once
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "run/run_config.h"
#include "run/settings.h"

namespace nfpark::run {

// Keys every mode's tags and tokens (park/secret.h): the run's secret is drawn from the OS
// unless one was given; PayloadPark's and QUEUE-MEM's tag keys are the tag key when given, else
// derived from the secret; NFSlicer's generation key always is. False with `err` when the OS
// gives no randomness. Loader::finish() calls it; benches that build a RunConfig call it too.
bool derive_keys(RunConfig& c, std::string& err);

class Loader {
 public:
  // Whose settings: nfpark run's (sim-only settings refused) or the simulator's (the table's
  // simulator defaults, sim-only settings accepted).
  enum class For : uint8_t { kRun, kSim };
  explicit Loader(For who = For::kRun);  // every setting at the table's default

  // A TOML file; relative `in`/`out` paths are taken relative to its directory.
  bool load_file(const std::string& path, std::string& err);
  // TOML text (the fuzz target's entry point); `name` stands for the file in messages.
  bool load_string(std::string_view text, const std::string& name, std::string& err);
  // Only the sections `only` (e.g. "park", "queuemem") of a parsed TOML table, each key
  // decoded through the settings table; other sections are the caller's (the simulator's
  // scenario files hold these beside their own). Errors as load_file's, naming `name`.
  bool load_sections(const toml::table& root, const std::string& name,
                     std::initializer_list<std::string_view> only, std::string& err);
  // --flag VALUE, or the bare flag of a kBool setting (`text` empty).
  bool set_flag(const Setting& s, std::optional<std::string_view> text, std::string& err);
  // Checks that need every setting at once: the chain and every [nf.NAME] against the NF
  // registry, queuemem.slices <= queues, what each role needs, an --out that is an input;
  // then keys every tag and token from the run's secret (drawn from the OS unless given).
  bool finish(std::string& err);
  // The [queuemem] settings together (slices <= queues, ...); finish() runs it, the simulator
  // too.
  bool check_queuemem(std::string& err) const;

  const RunConfig& config() const { return cfg_; }
  // Where a setting's value came from, to name it in a message: "--slots", "run.toml: [park]
  // slots", or "[park] slots (--slots)" for a default.
  std::string where(const Setting& s) const;
  std::string where(std::string_view section, std::string_view key) const;
  // True when the value was given (file or flag) rather than the default.
  bool given(std::string_view section, std::string_view key) const;

 private:
  bool load_root(std::shared_ptr<toml::table> root, const std::string& name, std::string& err);
  bool walk(const toml::table& t, const std::string& section, const std::string& name,
            std::string& err);
  bool apply(const Setting& s, Value v, char origin);
  bool check_files(std::string& err) const;
  bool check_roles(std::string& err) const;
  bool check_box(std::string& err) const;  // [reframe] placement = "box"
  bool apply_keys(std::string& err);

  RunConfig cfg_;
  For for_;
  std::string file_, dir_;
  std::map<const Setting*, char> origin_;  // 'f' file, 'c' command line
};

}  // namespace nfpark::run
