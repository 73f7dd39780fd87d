// The verbs of the `nfpark` command that are implemented in C++. Each takes the arguments after
// its verb (argv[0] is the verb) and returns the process exit code: 0 success, 1 failure of the
// work itself, 2 bad usage or bad input (with one clear line on stderr).
#pragma once

namespace nfpark::app {

int trace_main(int argc, char** argv);  // nfpark trace {gen|stats|reorder}
int run_main(int argc, char** argv);    // nfpark run
int kvs_main(int argc, char** argv);    // nfpark kvs
int sim_main(int argc, char** argv);    // nfpark sim

}  // namespace nfpark::app
