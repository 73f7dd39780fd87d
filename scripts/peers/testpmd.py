"""Peer `testpmd`: DPDK's own forwarding app (dpdk-testpmd, io and macswap forwarding) against
nfpark in baseline mode with chain `forward` / `macswap` — the same two ports, the same frames.

Both are a bump in the wire from port A to port B on one lcore (CPU 0): A = DPDK's net_pcap
replaying the trace from memory (infinite_rx), B = net_null (takes everything). nfpark runs its
whole baseline path (switch, NF link, NF server with the chain, switch) as `nfpark run
--traffic A+B` does. Cost = CPU ns per packet (common.py: a short and a long run, differenced;
testpmd's CPU from its "Press enter to exit" line, when it forwards, to its stop).
Frames: nfpark's generator, UDP, 1000 flows, 64 B and 1500 B (--quick: 64 B).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

from common import (
    PeerError,
    Ratio,
    Report,
    Run,
    cost_ns,
    gen_trace,
    have,
    nfpark_bin,
    run_for,
)

PAIRS = [("io", "forward"), ("macswap", "macswap")]


def ports(trace: Path) -> tuple[str, str]:
    return (f"net_pcap0,rx_pcap={trace},infinite_rx=1", "net_null0,no-rx=1")


def testpmd_run(trace: Path, mode: str, seconds: float) -> tuple[Run, int]:
    a, b = ports(trace)
    cmd = [
        "stdbuf", "-oL", "dpdk-testpmd", "--lcores=0@0,1@0", "--no-huge", "-m", "1024", "--no-pci",
        "--no-telemetry", f"--file-prefix=nfpeers{os.getpid()}", "--log-level=*:error",
        f"--vdev={a}", f"--vdev={b}", "--", f"--forward-mode={mode}", "--auto-start",
        "--nb-cores=1", "--total-num-mbufs=32768", "--port-topology=paired",
    ]
    r = run_for(cmd, seconds, ready="Press enter to exit")
    m = re.search(r"Forward statistics for port 0\s*-+\s*RX-packets:\s*(\d+)", r.stdout)
    if not m:
        raise PeerError(f"testpmd {mode}: no port 0 statistics (rc {r.rc}): {r.stderr[-300:]}")
    return r, int(m.group(1))


def nfpark_run(trace: Path, chain: str, seconds: float, cfg: Path | None = None,
               mbufs: int = 32768) -> tuple[Run, int]:
    a, b = ports(trace)
    cmd = [
        str(nfpark_bin()), "run", *([str(cfg)] if cfg else []), "--mode", "baseline", "--chain",
        chain, "--traffic", f"vdev:{a}+vdev:{b}", "--timeout", str(seconds), "--json",
        "--no-progress", "--pool-mbufs", str(mbufs),
    ]
    r = run_for(cmd, None)
    try:
        res = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise PeerError(f"nfpark {chain}: no JSON result (rc {r.rc}): {r.stderr[-300:]}") from None
    # net_pcap's infinite_rx keeps its copy of the trace in mbufs of nfpark's pool until the
    # port is closed, after nfpark's pool check: that check fails (rc 1, "a buffer leaked")
    # on every such run, so only in = out + drops is required here.
    if r.rc not in (0, 1) or not res.get("balanced", False):
        raise PeerError(f"nfpark {chain}: rc {r.rc}, balanced={res.get('balanced')}")
    return r, int(res["packets_in"])


def run(report: Report, scratch: Path, quick: bool) -> None:
    if not have("dpdk-testpmd"):
        report.skip("testpmd", "dpdk-testpmd not found (Debian package dpdk-dev)")
        return
    reps = 2 if quick else 3
    short_s, long_s = (0.5, 2.5) if quick else (1.0, 5.0)
    for size in [64] if quick else [64, 1500]:
        trace = gen_trace(scratch / f"tp{size}.pcap", 4096, 1000, 1, size)
        for mode, chain in PAIRS:
            r = Ratio()
            try:
                for _ in range(reps):
                    nf = cost_ns(functools.partial(nfpark_run, trace, chain), short_s, long_s)
                    tp = cost_ns(functools.partial(testpmd_run, trace, mode), short_s, long_s)
                    r.add(nf, tp)
                    print(f"  testpmd {mode} vs nfpark {chain}, {size} B: testpmd {tp:.1f} ns/pkt,"
                          f" nfpark {nf:.1f} ns/pkt", flush=True)
            except PeerError as e:
                report.fail("testpmd", f"{mode} {size}B: {e}")
                continue
            report.ratio("testpmd", f"{mode}/{chain} {size}B", r,
                         f"CPU ns/pkt: testpmd {min(r.peer):.1f}, nfpark {min(r.nfpark):.1f}")
