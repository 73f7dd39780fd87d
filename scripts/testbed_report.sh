#!/usr/bin/env bash
# Real programs through `nfpark testbed` in every mode (and a plain Linux bridge, no nfpark),
# printed as the Markdown table of docs/testbed.md: iperf3 TCP/UDP, TCP retransmissions,
# ping latency, a sha256-checked curl download (100 MB), nfpark's counters. Root; ~2-4 min.
#   scripts/testbed_report.sh [--seconds 10] [--mb 100] [--modes bridge,baseline,...] [--json F]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/nfpark ] || scripts/setup.sh
exec env PYTHONPATH="$(pwd)/python" .venv/bin/python -m nfpark.testbed.report "$@"
