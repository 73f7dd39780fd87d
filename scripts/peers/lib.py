"""Peer `lib`: DPDK's libraries against nfpark's own structures (build/peers_lib_bench: rte_acl vs
the firewall's ACL classifier, rte_lpm/rte_lpm6 vs the router's LPM, rte_hash and its lock-free
variant vs the NFs' flow table). The bench prints its own RATIO lines; this passes them on."""

from __future__ import annotations

from pathlib import Path

from common import Report, build_dir, run_for


def run(report: Report, scratch: Path, quick: bool) -> None:
    del scratch
    bench = build_dir() / "peers_lib_bench"
    if not bench.exists():
        report.skip("lib", f"{bench} not built (NFPARK_WITH_DPDK=ON: cmake --build build)")
        return
    r = run_for([str(bench), *(["--quick"] if quick else [])], None, timeout=1200)
    for line in r.stdout.splitlines():
        if line.startswith("RATIO "):
            report.lines.append(line)
        elif line.strip():
            print(line, flush=True)
    for line in r.stdout.splitlines():
        if line.startswith("RATIO "):
            print(line, flush=True)
    if r.rc != 0:
        report.fail("lib", f"peers_lib_bench exit {r.rc}: {r.stderr.strip()[-400:]}")
