#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan; build-fuzz/) and runs them (docs/testing.md).
#   scripts/fuzz.sh                     every target for 60 s, two at a time (the test command's)
#   scripts/fuzz.sh --seconds 3600      longer runs
#   scripts/fuzz.sh --jobs 1 modes      some targets, one at a time
#   scripts/fuzz.sh --merge             afterwards, fold what they found into tests/fuzz/corpus/
# Each target starts from its corpus (tests/fuzz/corpus/<name>) and the inputs that reproduced
# fixed findings (tests/fuzz/regressions/<name>); new inputs go to build-fuzz/corpus/<name>, so
# the repository is not touched unless --merge is given. A finding fails the run: its input is
# kept in build-fuzz/artifacts/ and the command that replays it is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
jobs=2
merge=""
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "usage: scripts/fuzz.sh [--seconds N] [--jobs N] [--merge] [TARGET...]" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(inputs codecs modes config)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DNFPARK_FUZZ=ON -DNFPARK_WITH_DPDK=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

out=build-fuzz
mkdir -p "$out/artifacts" "$out/logs"
run_one() {
  local t=$1 dir="$out/corpus/$1" log="$out/logs/$1.log"
  local seeds=()
  for d in "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t"; do [ -d "$d" ] && seeds+=("$d"); done
  mkdir -p "$dir"
  # -timeout: one input may take 10 s at most (a hang is a finding); -rss_limit_mb: a leak is.
  # -seed: NFPARK_FUZZ_SEED (make test sets 1, so CI replays the same search; 0 = random).
  if "$out/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -seed="${NFPARK_FUZZ_SEED:-0}" \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
      "$dir" "${seeds[@]}" >"$log" 2>&1; then
    echo "fuzz $t: $(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs" \
         "in ${seconds} s, no finding"
  else
    echo "fuzz $t: FINDING (log: $log)" >&2
    grep -E 'property violated|ERROR: |runtime error|SUMMARY' "$log" | head -5 >&2
    for a in "$out/artifacts/$t-"*; do
      [ -e "$a" ] && echo "  replay: $out/tests/fuzz/fuzz_$t $a" >&2
    done
    return 1
  fi
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done

if [ -n "$merge" ]; then
  for t in "${targets[@]}"; do
    "$out/tests/fuzz/fuzz_$t" -merge=1 "tests/fuzz/corpus/$t" "$out/corpus/$t" \
      >"$out/logs/$t.merge.log" 2>&1
    echo "merged $t: $(find "tests/fuzz/corpus/$t" -type f | wc -l) inputs in tests/fuzz/corpus/$t"
  done
fi
exit $status
