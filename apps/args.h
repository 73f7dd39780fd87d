// Args: a tiny option parser shared by the verbs of `nfpark`.
//
//   Args a("nfpark trace stats", "Analyse a pcap/pcapng trace.");
//   a.positional("FILE", "trace to analyse").flag("json", "print JSON")
//    .option("top", "N", "show the N largest flows", "10").repeated("nf", "NAME", "add an NF");
//   if (!a.parse(argc, argv)) { fprintf(stderr, "%s\n", a.error().c_str()); return 2; }
//   if (a.help()) { fputs(a.usage().c_str(), stdout); return 0; }
//
// Long options only: `--name value` or `--name=value`; flags take no value; a repeated option
// collects every value; `--` ends options. Errors are one line naming the option and the fix:
// unknown option, missing value, option given twice, bad number, missing/extra positional.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nfpark::app {

class Args {
 public:
  Args(std::string command, std::string description);

  Args& option(const std::string& name, const std::string& metavar, const std::string& help,
               const std::string& default_value = "");
  Args& flag(const std::string& name, const std::string& help);
  Args& repeated(const std::string& name, const std::string& metavar, const std::string& help);
  Args& positional(const std::string& name, const std::string& help);
  Args& epilog(const std::string& text);

  // Parses argv[first..argc). False with error() set on bad usage. `--help`/`-h` sets help().
  bool parse(int argc, char** argv, int first = 1);
  bool help() const { return help_; }
  const std::string& error() const { return error_; }
  std::string usage() const;

  bool has(const std::string& name) const;  // given on the command line
  bool flag_set(const std::string& name) const { return has(name); }
  std::string get(const std::string& name) const;  // value, or the default
  std::vector<std::string> all(const std::string& name) const;
  const std::string& pos(size_t i) const { return positionals_.at(i); }

  // Typed getters: false with error() set ("--packets: 'x' is not an integer >= 0").
  bool get_u64(const std::string& name, uint64_t& out);
  bool get_double(const std::string& name, double& out);

 private:
  struct Spec {
    std::string name, metavar, help, def;
    enum Kind { kOption, kFlag, kRepeated } kind;
    std::vector<std::string> values;
    bool seen = false;
  };
  Spec* find(const std::string& name);
  const Spec* find(const std::string& name) const;

  std::string command_, description_, epilog_;
  std::vector<Spec> specs_;
  std::vector<std::pair<std::string, std::string>> pos_specs_;
  std::vector<std::string> positionals_;
  std::string error_;
  bool help_ = false;
};

}  // namespace nfpark::app
