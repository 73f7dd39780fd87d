"""NFSlicer: latency and PCIe bytes vs load, in the simulator (`nfpark sim`).

Runs scenarios/nfslicer-latency.toml through `nfpark sim --json`: an L2 forwarder on one core of
an NF server whose NIC runs nfpark's own park::Slicer (park::SlicerNic) in front of PCIe, 1518 B
frames at 1-7 Mpps, baseline vs NFSlicer vs 160 B slices (docs/sim.md §7).
"""

from __future__ import annotations

import json
from typing import Any

from nfpark import dataplane
from nfpark.repro.core import Context, Panel, Result, Row, Series, X

NAME = "nfslicer_latency"
SCENARIO = "nfslicer-latency.toml"
VARIANTS = ("baseline", "nfslicer", "nfslicer-160")

PAPER_SETUP = (
    "TRex -> DPDK middlebox emulating the NIC's Slice & Splice -> NF server (Xeon 4214, "
    "ConnectX-6 Dx 100 GbE, PCIe Gen3 x16, DDIO 2 ways), one core, 1518 B frames at 4 Mpps "
    "(Fig. 7), 1-7 Mpps direct 64 B vs 1518 B (Fig. 10), PCIe traffic at 6.5 Mpps (Fig. 15).")
# §VI-A, L2 forwarder at 4 Mpps: baseline p50 6 us / p90 7.3 us, NFSlicer -20.2% / -28.6%
# (all NFs -17.0..-20.2% / -9.4..-28.6%); Fig. 8: 160 B sliced ~-2%; Fig. 15: 21 -> 1.9 GB/s.
PAPER_GAIN_4MPPS = {"p50": -20.2, "p90": -28.6}


def steps(quick: bool) -> int:
    return 1


def _mpps(r: dict[str, Any]) -> float:
    return round(float(r["throughput_in_mpps"]), 1)


def _pcie_gbytes_per_s(r: dict[str, Any], mpps: float, overhead: int = 72) -> float:
    """Bytes across PCIe a second at `mpps`, both ways: data, descriptors, TLP overhead."""
    c = r["counters"]
    n = max(c["park.host_boundary.rx_packets"], 1)
    per_pkt = sum(c[f"park.host_boundary.{d}_{k}"] for d in ("rx", "tx")
                  for k in ("data_bytes", "desc_bytes")) / n + 2 * overhead
    return float(per_pkt * mpps * 1e6 / 1e9)


def _gain(base: float, x: float) -> float:
    return 100.0 * (x - base) / base


def measure(ctx: Context) -> Result:
    ctx.say(f"nfpark sim scenarios/{SCENARIO}")
    path = dataplane.REPO / "scenarios" / SCENARIO
    args = ["sim", str(path), "--json"] + (["--quick"] if ctx.quick else [])
    runs: list[dict[str, Any]] = json.loads(ctx.nfpark(*args))["runs"]
    by = {(str(r["params"]["variant"]), _mpps(r)): r for r in runs}
    for one in runs:
        if not (one["balanced"] and one["pools_full"]):
            ctx.errors.append(f"{one['params']}: in != out + drops or pools not full")
    loads: list[X] = sorted({m for _, m in by})
    panels: list[Panel] = []
    for q in ("p50", "p90"):
        series = [Series(f"nfpark sim: {v}", "nfpark", loads,
                         [by[(v, float(m))]["latency_us"][q] if (v, m) in by else None
                          for m in loads]) for v in VARIANTS]
        series.append(Series(f"paper: L2 forwarder at 4 Mpps, baseline / NFSlicer ({q})",
                             "paper", [4.0, 4.0],
                             [6.0 if q == "p50" else 7.3,
                              (6.0 if q == "p50" else 7.3) * (1 + PAPER_GAIN_4MPPS[q] / 100)],
                             "points", "§VI-A"))
        panels.append(Panel(f"{q} latency vs load, 1518 B frames", "load [Mpps]",
                            f"{q} latency [us]", series))
    rows: list[Row] = []
    for m in loads:
        base = by.get(("baseline", float(m)))
        if base is None:
            continue
        for v in VARIANTS[1:]:
            r = by.get((v, float(m)))
            if r is None:
                continue
            for q in ("p50", "p90"):
                paper = PAPER_GAIN_4MPPS[q] if m == 4.0 and v == "nfslicer" else None
                rows.append(Row(f"{v} at {m:g} Mpps", f"{q} latency vs baseline", "%",
                                _gain(base["latency_us"][q], r["latency_us"][q]), paper))
    top = max(loads)
    for v in VARIANTS:
        r = by.get((v, float(top)))
        if r is None:
            continue
        c = r["counters"]
        n = max(c["park.host_boundary.rx_packets"], 1)
        data = (c["park.host_boundary.rx_data_bytes"] + c["park.host_boundary.tx_data_bytes"]) / n
        rows.append(Row(f"{v}", "packet bytes across PCIe a packet (RX+TX)", "B", data,
                        3036.0 if v == "baseline" else 128.0 if v == "nfslicer" else None,
                        "1518 B -> 64 B: 'up to 24x'" if v == "nfslicer" else ""))
        rows.append(Row(f"{v}", "PCIe traffic at 6.5 Mpps", "GB/s", _pcie_gbytes_per_s(r, 6.5),
                        21.0 if v == "baseline" else 1.9 if v == "nfslicer" else None,
                        "Fig. 15"))
    notes = ["Simulated: nfpark's Slicer on an NF-server model; PCIe is priced by bytes only "
             "(no per-transaction latency, no DDIO), so the latency gap is smaller than the "
             "paper's (docs/sim.md §7)."]
    return Result(NAME, "NFSlicer: latency and PCIe bytes vs load (simulated)", panels, rows,
                  setup={"scenario": SCENARIO, "quick": ctx.quick},
                  paper_setup=PAPER_SETUP, notes=notes)


def fallback() -> Result:
    return Result(NAME, "NFSlicer: latency and PCIe bytes vs load (simulated)", [], [],
                  paper_setup=PAPER_SETUP)
