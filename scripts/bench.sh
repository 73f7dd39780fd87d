#!/usr/bin/env bash
# Runs every benchmark in bench/ and prints a summary of the ratios (`make bench`).
#   scripts/bench.sh             full runs (each bench < 60 s of CPU; longer on a busy machine)
#   scripts/bench.sh --quick     quick runs (each < 10 s of CPU)
#   scripts/bench.sh --peers [--quick]   nfpark against its peers (DPDK's libraries, dpdk-testpmd,
#                                Open vSwitch with DPDK, the kernel's nftables, FastClick when
#                                NFPARK_FASTCLICK names its `click`), interleaved, same run:
#                                `RATIO peer ...` and `SKIP peer ...` lines (scripts/peers/run.py)
#   BUILD_DIR=/tmp/b scripts/bench.sh   use another build directory (default: build/)
# Full outputs go to bench/results/<UTC time>/<bench>.txt (git-ignored). A bench that is not
# built (e.g. the DPDK ones with NFPARK_WITH_DPDK=OFF) is reported as skipped, not failed.
# Every ratio is measured against its baseline in the same run (see bench/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
quick=""
peers=""
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --peers) peers=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "usage: scripts/bench.sh [--quick] [--peers]" >&2; exit 2 ;;
  esac
done
build=${BUILD_DIR:-build}
if [ -n "$peers" ]; then
  # The peers' packages are installed here, never by the test command (scripts/peers/install.sh
  # says what it could not install; the peer is then reported as skipped with that reason).
  scripts/peers/install.sh >&2 || true
  out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-peers${quick:+-quick}"
  mkdir -p "$out"
  py=.venv/bin/python
  [ -x "$py" ] || py=python3
  BUILD_DIR=$build "$py" scripts/peers/run.py ${quick:+--quick} 2>&1 | tee "$out/peers.txt"
  status=${PIPESTATUS[0]}
  echo "full output: $out/peers.txt"
  exit "$status"
fi
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)${quick:+-quick}"
mkdir -p "$out"

# name | arguments for the full run | arguments for --quick
benches=(
  "switch_bench||--quick"
  "workers_bench||--quick"
  "split_merge_bench||--quick"
  "nicmode_bench||--quick"
  "kvs_bench||--quick"
  "reframe_chain_bench||--quick"
  "nf_bench||--quick"
  "acl_bench||50000"
  "reframe_bench||500000"
  "trace_bench|1000000 /tmp|100000 /tmp"
  "sim_bench||--quick"
)

status=0
ran=() skipped=() failed=()
for spec in "${benches[@]}"; do
  IFS='|' read -r name full qargs <<<"$spec"
  bin="$build/$name"
  if [ ! -x "$bin" ]; then
    skipped+=("$name")
    continue
  fi
  args=$full
  [ -n "$quick" ] && args=$qargs
  echo "== $name $args" >&2
  start=$(date +%s%N)
  # shellcheck disable=SC2086  # args are word lists on purpose
  if "$bin" $args >"$out/$name.txt" 2>"$out/$name.err"; then
    ms=$((($(date +%s%N) - start) / 1000000))
    ran+=("$name ($((ms / 1000)).$((ms % 1000 / 100)) s)")
  else
    failed+=("$name (exit $?, see $out/$name.err)")
    status=1
  fi
done

# Every scenario's --quick form (issue 15: all together under 3 minutes here), then their headline
# results (tests/e2e/test_sim_scenarios.py, including the runs the test command leaves out).
if [ -x "$build/nfpark" ]; then
  echo "== sim scenarios --quick" >&2
  start=$(date +%s%N)
  for s in scenarios/*.toml; do
    s0=$(date +%s%N)
    if "$build/nfpark" sim --quick "$s" >>"$out/sim_scenarios.txt" 2>>"$out/sim_scenarios.err"; then
      echo "scenario $(basename "$s" .toml) --quick: $((($(date +%s%N) - s0) / 1000000)) ms wall" \
        >>"$out/sim_scenarios.txt"
    else
      failed+=("nfpark sim --quick $s (see $out/sim_scenarios.err)")
      status=1
    fi
  done
  ms=$((($(date +%s%N) - start) / 1000000))
  awk -v ms="$ms" 'BEGIN { printf "RATIO sim scenarios-quick wall/180 s budget %.2fx (%.1f s, all of scenarios/*.toml)\n", ms / 180000, ms / 1000 }' \
    >>"$out/sim_scenarios.txt"
  ran+=("sim scenarios ($((ms / 1000)).$((ms % 1000 / 100)) s)")
  py=.venv/bin/python
  [ -x "$py" ] || py=python3
  if NFPARK_SIM_ALL_SCENARIOS=1 PYTHONPATH=python "$py" -m pytest -q -p no:cacheprovider \
    tests/e2e/test_sim_scenarios.py >"$out/sim_scenarios_checks.txt" 2>&1; then
    ran+=("sim scenario checks")
  else
    failed+=("sim scenario checks (see $out/sim_scenarios_checks.txt)")
    status=1
  fi
fi

echo
echo "== summary ($out)"
# Ratio benches print "RATIO ..." lines; the older benches print ratios in their own tables.
cat "$out"/*.txt 2>/dev/null | grep '^RATIO ' | sed 's/^RATIO /  /'
if [ -f "$out/nf_bench.txt" ]; then
  echo "  nf_bench (ratios vs forward / SLF 8 vs 1; FastClick only from --peers, same run):"
  grep -E "FastClick|ACL cost in the same run" "$out/nf_bench.txt" | sed 's/^/    /'
fi
if [ -f "$out/acl_bench.txt" ]; then
  echo "  acl_bench (tree vs linear scan, same keys):"
  grep -E '^(ruleset|passing|random) ' "$out/acl_bench.txt" | sed 's/^/    /'
fi
if [ -f "$out/reframe_bench.txt" ]; then
  echo "  reframe_bench (Reframer vs passthrough, ns/pkt):"
  grep '^flows=' "$out/reframe_bench.txt" | sed 's/^/    /'
fi
echo "  ran:     ${ran[*]:-none}"
[ ${#skipped[@]} -gt 0 ] && echo "  skipped: ${skipped[*]} (not built in $build)"
[ ${#failed[@]} -gt 0 ] && echo "  FAILED:  ${failed[*]}"
exit $status
