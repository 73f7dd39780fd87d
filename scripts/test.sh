#!/usr/bin/env bash
# The test command (`make test`, and CI's .ci/run): every suite, failing on the first failure.
#  1. C++ unit tests (GoogleTest via ctest) on the release build
#  2. the same unit tests built by clang with AddressSanitizer + UBSan
#  3. the libFuzzer targets (clang, ASan + UBSan), 30 s each with a fixed seed, two at a time
#     (scripts/fuzz.sh; longer searches: scripts/fuzz.sh --seconds 3600)
#  4. Python lab tests and end-to-end tests that drive ./nfpark (pytest, files in parallel;
#     includes the short soak)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
start=$(date +%s)
last=$start
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
cpu() {  # sets cpu_s: CPU seconds (user + sys) of every finished child so far (`times`, 2nd line;
  # run in this shell, not in a pipe's subshell, which has no children of its own)
  times >"$times_file"
  cpu_s=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
                         printf "%d", n }' "$times_file")
}
cpu; last_cpu=$cpu_s
took() {  # the CI budget (well under 20 min on 2 cores): each stage says what it cost, wall and
  # CPU (wall misleads on a shared machine)
  local now c; now=$(date +%s); cpu; c=$cpu_s
  echo "   ($(( now - last )) s wall, $(( c - last_cpu )) s CPU)"; last=$now; last_cpu=$c
}

echo "== unit tests (release)"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 300
took

echo "== unit tests (ASan + UBSan, clang)"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# clang, as the fuzzers (setup.sh installs it): it compiles this -O0 sanitizer build about twice
# as fast as GCC. A build-asan/ configured with another compiler is started afresh.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DNFPARK_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
  "${launcher[@]}" >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 600
took

echo "== fuzzing (libFuzzer + ASan + UBSan, ${NFPARK_FUZZ_SECONDS:-30} s per target, two at a time)"
NFPARK_FUZZ_SEED="${NFPARK_FUZZ_SEED:-1}" scripts/fuzz.sh --seconds "${NFPARK_FUZZ_SECONDS:-30}" --jobs 2
took

echo "== Python lint and types (ruff, mypy)"
.venv/bin/ruff check python tests/e2e
(cd python && ../.venv/bin/mypy nfpark)
took

echo "== Python lab and end-to-end tests (pytest-xdist: one test file per worker, $jobs at a time)"
# Most of an end-to-end test is waiting (DPDK start-up, iperf3, signals, timeouts): files run
# side by side, each test names its namespaces, sockets and files after its process.
PYTHONPATH="$(pwd)/python" .venv/bin/python -m pytest -q -n "$jobs" --dist loadfile --durations=15 \
  python/tests tests/e2e
took

cpu
echo "== all tests passed in $(( $(date +%s) - start )) s wall, $cpu_s s CPU (setup and release build not included)"
