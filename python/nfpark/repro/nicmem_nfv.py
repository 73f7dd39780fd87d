"""nicmem (nmNFV): throughput and latency of a NAT at up to 200 Gbps, in the simulator.

Runs scenarios/nicmem-nfv.toml through `nfpark sim --json`: two NF servers behind 100 GbE NICs
whose NIC programs are nfpark's own park::NicSplit / park::NicMemory (host, split, nicmem),
1500 B UDP, offered load swept to 200 Gbps (docs/sim.md §7).
"""

from __future__ import annotations

import json
from typing import Any

from nfpark import dataplane
from nfpark.repro.core import Context, Panel, Result, Row, Series, X

NAME = "nicmem_nfv"
SCENARIO = "nicmem-nfv.toml"
VARIANTS = ("host", "split", "nicmem")

PAPER_SETUP = (
    "FastClick NAT on 14 cores (Xeon Silver 4216, 2.1 GHz), two ConnectX-5 100 GbE NICs on "
    "PCIe Gen3 x16, T-Rex at 200 Gbps of 1500 B UDP; host vs split vs nmNFV (payloads in "
    "NIC memory, headers inlined on TX).")
# Abstract: nmNFV "shortens NFV latency by up to 23% and increases its throughput by up to 19%";
# Fig. 11: at line rate host/split 64 us vs nmNFV 22 us.
PAPER_THROUGHPUT_GAIN = 19.0
PAPER_LATENCY_GAIN = -23.0


def steps(quick: bool) -> int:
    return 1


def _offered(r: dict[str, Any]) -> float:
    return 2 * float(r["params"]["traffic.rate_gbps"])


def measure(ctx: Context) -> Result:
    ctx.say(f"nfpark sim scenarios/{SCENARIO}")
    path = dataplane.REPO / "scenarios" / SCENARIO
    args = ["sim", str(path), "--json"] + (["--quick"] if ctx.quick else [])
    runs: list[dict[str, Any]] = json.loads(ctx.nfpark(*args))["runs"]
    by = {(str(r["params"]["variant"]), _offered(r)): r for r in runs}
    for one in runs:
        if not (one["balanced"] and one["pools_full"]):
            ctx.errors.append(f"{one['params']}: in != out + drops or pools not full")
    loads: list[X] = sorted({x for _, x in by})

    def series(key: str, sub: str | None = None) -> list[Series]:
        out = []
        for v in VARIANTS:
            ys: list[float | None] = []
            for x in loads:
                r = by.get((v, float(x)))
                ys.append(None if r is None else float(r[key][sub] if sub else r[key]))
            out.append(Series(f"nfpark sim: {v}", "nfpark", loads, ys))
        return out

    top = max(loads)
    thr = series("throughput_out_gbps")
    thr.append(Series("paper: nmNFV line rate, host up to 19% lower", "paper", [200.0, 200.0],
                      [200.0, 200.0 / (1 + PAPER_THROUGHPUT_GAIN / 100)], "points", "abstract"))
    lat = series("latency_us", "avg")
    lat.append(Series("paper: at line rate host 64 us, nmNFV 22 us", "paper", [200.0, 200.0],
                      [64.0, 22.0], "points", "Fig. 11"))
    panels = [Panel("throughput vs offered load, 1500 B", "offered [Gbps]", "output [Gbps]", thr),
              Panel("average latency vs offered load", "offered [Gbps]", "latency [us]", lat,
                    "log")]
    rows: list[Row] = []
    for x in loads:
        h, n = by.get(("host", float(x))), by.get(("nicmem", float(x)))
        if h is None or n is None:
            continue
        case = f"nicmem vs host at {x:g} Gbps"
        rows.append(Row(case, "throughput", "%",
                        100 * (n["throughput_out_gbps"] / h["throughput_out_gbps"] - 1),
                        PAPER_THROUGHPUT_GAIN if x == top else None,
                        "up to +19%" if x == top else ""))
        rows.append(Row(case, "average latency", "%",
                        100 * (n["latency_us"]["avg"] / h["latency_us"]["avg"] - 1),
                        None, "up to -23% (abstract); -66% at line rate (Fig. 11)"))
    for v in VARIANTS:
        r = by.get((v, float(top)))
        if r is None:
            continue
        c = r["counters"]
        k = max(c["park.host_boundary.rx_packets"], 1)
        rows.append(Row(v, "packet bytes to host memory a packet", "B",
                        c["park.host_boundary.rx_data_bytes"] / k,
                        1500.0 if v != "nicmem" else 64.0,
                        "nicmem: the 64 B header segment (§5)" if v == "nicmem" else ""))
    notes = ["Simulated: nfpark's NicSplit on NF-server models. The host's extra cycles for "
             "payloads in host memory (DDIO leaks) are an input taken from the paper's core "
             "counts; PCIe and the latencies are the model's (docs/sim.md §7)."]
    return Result(NAME, "nicmem: NAT throughput and latency at up to 200 Gbps (simulated)",
                  panels, rows, setup={"scenario": SCENARIO, "quick": ctx.quick},
                  paper_setup=PAPER_SETUP, notes=notes)


def fallback() -> Result:
    return Result(NAME, "nicmem: NAT throughput and latency at up to 200 Gbps (simulated)", [],
                  [], paper_setup=PAPER_SETUP)
