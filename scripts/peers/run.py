#!/usr/bin/env python3
"""Runs nfpark against the peers a user would pick instead, on this machine, in one run
(issue 19; `scripts/bench.sh --peers [--quick]` calls this). Each peer is measured interleaved
with nfpark, N repetitions, and reported as

    RATIO peer <peer> <what> nfpark/<peer> <x> [<min>-<max>, N=<n>]   (> 1: nfpark faster)
    SKIP peer <peer>: <why it could not run here>
    FAILED peer <peer>: <what went wrong>   (exit status 1)

Peers: lib (DPDK's rte_acl, rte_lpm/rte_lpm6, rte_hash: build/peers_lib_bench), testpmd, ovs
(Open vSwitch with DPDK), kernel (nftables between network namespaces), fastclick (when
NFPARK_FASTCLICK names a FastClick `click` binary). How each is measured and what limits it:
docs/performance.md, "Peers".

    scripts/peers/run.py [--quick] [PEER ...]      (default: every peer)
"""

from __future__ import annotations

import argparse
import sys
import time

import common
import fastclick
import kernel
import lib
import ovs
import testpmd

PEERS = {
    "lib": lib.run,
    "testpmd": testpmd.run,
    "ovs": ovs.run,
    "kernel": kernel.run,
    "fastclick": fastclick.run,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer cases and repetitions")
    ap.add_argument("peers", nargs="*", choices=[[], *PEERS], help="peers to run (default: all)")
    a = ap.parse_args()
    chosen = a.peers or list(PEERS)
    if not common.nfpark_bin().exists():
        print(f"peers: {common.nfpark_bin()} not built (cmake --build build)", file=sys.stderr)
        return 2
    report = common.Report()
    d = common.scratch()
    print(f"peers{' --quick' if a.quick else ''}: {', '.join(chosen)}; {common.load()}")
    try:
        for name in chosen:
            t0 = time.monotonic()
            print(f"\n== peer {name} ({common.load()})", flush=True)
            try:
                PEERS[name](report, d, a.quick)
            except common.PeerError as e:
                report.fail(name, str(e))
            except (OSError, ValueError, KeyError, RuntimeError) as e:  # the next peer still runs
                report.fail(name, f"{type(e).__name__}: {e}")
            print(f"   ({name}: {time.monotonic() - t0:.0f} s)", flush=True)
    finally:
        common.cleanup(d)
    print(f"\n== peers summary ({common.load()})")
    for line in report.lines:
        print("  " + line)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
