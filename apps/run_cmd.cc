// nfpark run: the dataplane on DPDK ports — a parking switch and an NF server, in one process
// or two. Its flags, like its config file, come from the settings table (run/settings.h): this
// file only wires them to run::Loader, checks memory, runs, and turns the result into an exit
// code (run/run_result.h).
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "dp/runner.h"
#include "run/budget.h"
#include "run/load.h"
#include "run/usage.h"

namespace nfpark::app {

namespace {

Args make_args() {
  Args a("nfpark run", "Run packets through a parking switch and an NF chain on DPDK ports.");
  for (const run::Setting& s : run::settings()) {
    if (s.flag.empty()) continue;
    const std::string flag(s.flag);
    if (s.kind == run::Kind::kBool)
      a.flag(flag, run::flag_help(s));
    else
      a.option(flag, std::string(s.metavar), run::flag_help(s));
  }
  a.flag("json", "print the result as JSON")
      .flag("settings-md", "print every setting as the Markdown table of docs/run.md")
      .epilog(
          "Usage: nfpark run [CONFIG.toml] [options] — the optional TOML config file (see\n"
          "docs/run.md; every option above is also a key of it, shown in brackets) comes first;\n"
          "flags override it.\n"
          "Example: nfpark run --mode payloadpark --chain nat,counter --in dc.pcap --out out.pcap "
          "--json\n"
          "Every packet in ends as out, an NF drop, or a named drop: the result says whether\n"
          "in = out + drops held and whether every mempool was full again at exit.\n" +
          run::sim_only_text() + run::exit_codes_text());
  return a;
}

int fail(const std::string& err, int code) {
  std::fprintf(stderr, "nfpark run: %s\n", err.c_str());
  return code;
}

}  // namespace

int run_main(int argc, char** argv) {
  Args a = make_args();
  // An optional config file comes first: nfpark run CONFIG.toml [options].
  std::string config_path;
  int first = 1;
  if (argc > 1 && argv[1][0] != '-') {
    config_path = argv[1];
    first = 2;
  }
  if (!a.parse(argc, argv, first)) return fail(a.error(), run::kExitBadInput);
  if (a.help()) {
    std::fputs(a.usage().c_str(), stdout);
    return 0;
  }
  if (a.flag_set("settings-md")) {
    std::fputs(run::settings_markdown().c_str(), stdout);
    return 0;
  }
  run::Loader loader;
  std::string err;
  if (!config_path.empty() && !loader.load_file(config_path, err))
    return fail(err, run::kExitBadInput);
  for (const run::Setting& s : run::settings()) {
    if (s.flag.empty() || !a.has(std::string(s.flag))) continue;
    std::optional<std::string> v;
    if (s.kind != run::Kind::kBool) v = a.get(std::string(s.flag));
    if (!loader.set_flag(s, v, err)) return fail(err, run::kExitBadInput);
  }
  run::Budget budget;
  if (!loader.finish(err) || !run::check_memory(loader, run::available_memory(), budget, err))
    return fail(err, run::kExitBadInput);
  const run::RunConfig& cfg = loader.config();

  dp::RunResult res;
  const int rc = dp::run(cfg, res, err);
  if (rc == run::kExitBadInput || !res.ran) return fail(err, rc == 2 ? 2 : 1);
  if (a.flag_set("json"))
    std::printf("%s\n", res.to_json().c_str());
  else
    std::fputs(res.to_text().c_str(), stdout);
  for (const std::string& w : res.warnings)
    std::fprintf(stderr, "nfpark run: warning: %s\n", w.c_str());
  if (rc != 0) return fail(err, run::kExitBroken);
  std::string why;
  const int verdict = res.verdict(why);
  return verdict == run::kExitComplete ? 0 : fail(why, verdict);
}

}  // namespace nfpark::app
