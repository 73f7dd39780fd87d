// Usage: the parts of `nfpark run --help` and of docs/run.md that the settings table writes —
// one line per flag, the table of every setting, and the exit codes — so that neither can
// forget a setting or disagree with the code (tests/e2e/test_hardening_config.py compares
// docs/run.md with `nfpark run --settings-md`).
#pragma once
#include <string>

#include "run/settings.h"

namespace nfpark::run {

// A flag's help: "what it does (range and unit; default D; file: [section] key)".
std::string flag_help(const Setting& s);
// The settings as a Markdown table (docs/run.md, "Settings").
std::string settings_markdown();
// The settings only the simulator reads, one line naming them ("" if none; `--help` epilog).
std::string sim_only_text();
// The exit codes, one per line (`--help` epilog and docs/run.md).
std::string exit_codes_text();

}  // namespace nfpark::run
