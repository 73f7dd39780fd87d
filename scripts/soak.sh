#!/usr/bin/env bash
# The long soak (docs/testing.md): every parking mode, NF server inline and on its own lcore,
# under every NF fault at once with crafted traffic-side frames, run after run with new seeds
# until the time is up; each run checked (no foreign payload, balance, pools full, every fault
# seen, memory not growing with the packet count). One JSON line per case; exit 1 on a failure.
#   scripts/soak.sh --minutes 10                      (default 10)
#   scripts/soak.sh --minutes 60 --packets 1000000    larger runs (dc sizes: ~0.9 GB per trace)
#   scripts/soak.sh --modes payloadpark,queuemem      some modes only
# Uses ./build/nfpark (or $NFPARK_BIN); temporary files go to $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,9p' "$0"; exit 0 ;; esac
PYTHONPATH="$(pwd)/python" exec .venv/bin/python -m tests.e2e.soak "$@"
