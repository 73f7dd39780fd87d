"""QUEUE-MEM (NSDI'26) Fig. 15 and Fig. 7 at 1.4 Tbps, in the simulator (`nfpark sim`).

The dataplane here cannot offer 1.4 Tbps, so this entry runs the scenarios
scenarios/queuemem-fig15.toml (baseline vs PayloadPark-like 160 B vs QUEUE-MEM, 14 x 100 GbE of
1500 B packets, input per port swept) and scenarios/queuemem-fig7.toml (header drops at 1.4 Tbps)
through `nfpark sim --json`: nfpark's own QueueMem and PayloadPark code on models of a Tofino 2
and one NF server with a 100 GbE link (docs/sim.md §7).
"""

from __future__ import annotations

import json
from typing import Any

from nfpark import dataplane
from nfpark.repro.core import Context, Panel, Result, Row, Series, X

NAME = "queuemem_tbps"
SYSTEMS = ("baseline", "payloadpark-like", "queuemem")

PAPER_SETUP = (
    "Tofino 2 (64 MB buffer), 14 x 100 GbE fed by a multicasting switch, 1.5 KB packets, one NF "
    "server (FAJITA forwarder) on 100 GbE; baseline sends whole packets, PayloadPark-like parks "
    "160 B, QUEUE-MEM parks the payload in paused egress queues (Fig. 15); Fig. 7 drops a share "
    "of the headers at the NF.")
# Fig. 15's text: the baseline "cannot go beyond 100 Gbps", PayloadPark-like "about 115 Gbps",
# QUEUE-MEM sustains 1.4 Tbps with about 76 Gbps of headers and zero loss. Fig. 7: output =
# (1 - x) of 1.4 Tbps (700 Gbps at 50%).
PAPER_OUT_GBPS = {"baseline": 100.0, "payloadpark-like": 115.0, "queuemem": 1400.0}


def steps(quick: bool) -> int:
    return 2


def _sim(ctx: Context, scenario: str) -> list[dict[str, Any]]:
    path = dataplane.REPO / "scenarios" / scenario
    args = ["sim", str(path), "--json"] + (["--quick"] if ctx.quick else [])
    runs: list[dict[str, Any]] = json.loads(ctx.nfpark(*args))["runs"]
    return runs


def _panels(fig15: list[dict[str, Any]], fig7: list[dict[str, Any]]) -> list[Panel]:
    rates = sorted({14 * float(r["params"]["traffic.rate_gbps"]) for r in fig15})
    series: list[Series] = []
    for sysname in SYSTEMS:
        by = {14 * float(r["params"]["traffic.rate_gbps"]): r["throughput_out_gbps"]
              for r in fig15 if r["params"].get("variant") == sysname}
        series.append(Series(f"nfpark sim: {sysname}", "nfpark", list(rates),
                             [by.get(x) for x in rates]))
    series += [Series("paper: baseline capped at 100 Gbps", "paper", [1400.0], [100.0], "points",
                      "Fig. 15 text"),
               Series("paper: PayloadPark-like ~115 Gbps", "paper", [1400.0], [115.0], "points",
                      "Fig. 15 text"),
               Series("paper: QUEUE-MEM sustains 1.4 Tbps", "paper", [1400.0], [1400.0],
                      "points", "Fig. 15 text")]
    drops = [float(r["params"]["nf_server.drop"]) for r in fig7]
    xs: list[X] = [100.0 * d for d in drops]
    d7 = [Series("nfpark sim: output", "nfpark", xs, [r["throughput_out_gbps"] for r in fig7]),
          Series("paper: output = (1 - x) x 1.4 Tbps", "paper", xs,
                 [1400.0 * (1 - d) for d in drops], "line", "Q2 text ('exactly reduced')")]
    return [Panel("Fig. 15: output vs input, 1.5 KB packets", "input [Gbps]", "output [Gbps]",
                  series, "log"),
            Panel("Fig. 7: output at 1.4 Tbps vs header drops", "headers dropped by the NF [%]",
                  "output [Gbps]", d7)]


def _rows(fig15: list[dict[str, Any]], fig7: list[dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    top = max(float(r["params"]["traffic.rate_gbps"]) for r in fig15)
    for r in fig15:
        if float(r["params"]["traffic.rate_gbps"]) != top:
            continue
        v = str(r["params"]["variant"])
        case = f"{v} at {14 * top:g} Gbps"
        rows.append(Row(case, "output", "Gbps", r["throughput_out_gbps"], PAPER_OUT_GBPS[v]))
        rows.append(Row(case, "NF link", "Gbps", r["nf_link_gbps"],
                        76.0 if v == "queuemem" else None,
                        "about 76 Gbps of headers" if v == "queuemem" else ""))
        rows.append(Row(case, "lost", "%", 100.0 * r["drops_total"] / max(r["packets_in"], 1),
                        0.0 if v == "queuemem" else None))
        rows.append(Row(case, "peak buffer", "MB", r["peak_buffer_bytes"] / 1e6,
                        None, "QUEUE-MEM never above 9 MB (Fig. 6)" if v == "queuemem" else ""))
    for r in fig7:
        d = float(r["params"]["nf_server.drop"])
        rows.append(Row(f"drop {100 * d:g}%", "output", "Gbps", r["throughput_out_gbps"],
                        1400.0 * (1 - d)))
    return rows


def measure(ctx: Context) -> Result:
    ctx.say("nfpark sim scenarios/queuemem-fig15.toml")
    fig15 = _sim(ctx, "queuemem-fig15.toml")
    ctx.say("nfpark sim scenarios/queuemem-fig7.toml")
    fig7 = _sim(ctx, "queuemem-fig7.toml")
    for r in fig15 + fig7:
        if not (r["balanced"] and r["pools_full"]):
            ctx.errors.append(f"{r['mode']} {r['params']}: in != out + drops or pools not full")
    notes = ["Simulated: nfpark's QueueMem and PayloadPark code on switch and NF-server models "
             "(docs/sim.md §7 explains where the numbers differ from the paper's)."]
    return Result(NAME, "QUEUE-MEM at 1.4 Tbps in the simulator (Figs. 15 and 7)",
                  _panels(fig15, fig7), _rows(fig15, fig7),
                  setup={"scenarios": ["queuemem-fig15.toml", "queuemem-fig7.toml"],
                         "quick": ctx.quick},
                  paper_setup=PAPER_SETUP, notes=notes)


def fallback() -> Result:
    return Result(NAME, "QUEUE-MEM at 1.4 Tbps in the simulator (Figs. 15 and 7)", [], [],
                  paper_setup=PAPER_SETUP)
