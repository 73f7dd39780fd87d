"""QUEUE-MEM (NSDI'26) Q6, Fig. 11: packet reordering vs spatial locality factor (SLF).

nfpark generates 1500 B UDP traces with SLF 1, 8 and 20 (`trace gen --slf K`), runs them through
`--mode queuemem` with the forwarder, and compares sent and received packets (RFC 4737) two ways:
over the whole stream (`nfpark trace reorder`) and per flow (the paper's metric, "the maximum
distance between two packets of the same flow"), the latter computed from the packet ids here.
"""

from __future__ import annotations

from typing import Any

from nfpark.repro.core import Context, Panel, Result, Row, Series, X
from nfpark.repro.pcapids import per_flow_reordering

NAME = "queuemem_reorder"
SLFS = (1, 8, 20)
SIZE = 1500
CHAIN = "forward"

PAPER_SETUP = (
    "Tofino 2 switch (P4) at 1 Tbps input, payloads in paused egress queues released by batch "
    "(AFC pause/resume, recirculation on recovery); 15 M packets captured after the switch; "
    "RFC 4737 per flow (Fig. 11a extent, Fig. 11b out-of-order share).")


def steps(quick: bool) -> int:
    return 3 * len(SLFS)


def _panels(res: dict[int, dict[str, Any]]) -> list[Panel]:
    xs: list[X] = [float(k) for k in SLFS]

    def col(key: str) -> list[float | None]:
        return [float(res[k][key]) if k in res else None for k in SLFS]

    extent = [Series("nfpark, per flow (the paper's metric)", "nfpark", xs, col("flow_extent")),
              Series("nfpark, whole stream (nfpark trace reorder)", "nfpark", xs,
                     col("stream_extent")),
              Series("paper: extent ~10 at SLF 20 (others: grows with SLF, no numbers)", "paper",
                     [20.0], [10.0], "points", "Q6 text; Fig. 11a values not given")]
    ooo = [Series("nfpark, per flow (the paper's metric)", "nfpark", xs, col("flow_pct")),
           Series("nfpark, whole stream (nfpark trace reorder)", "nfpark", xs, col("stream_pct")),
           Series("paper: < 0.01% at every SLF (bound only)", "paper", xs, [0.0] * len(SLFS),
                  "band", "Q6 text; Fig. 11b values not given", [0.01] * len(SLFS))]
    return [
        Panel("Reordering extent (max, RFC 4737)", "spatial locality factor, SLF [packets]",
              "reordering extent [packets] (symlog)", extent, "symlog"),
        Panel("Out-of-order packets", "spatial locality factor, SLF [packets]",
              "out-of-order packets [%] (symlog)", ooo, "symlog"),
    ]


def _rows(res: dict[int, dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    for k in SLFS:
        if k not in res:
            continue
        r, case = res[k], f"SLF {k}"
        rows.append(Row(case, "extent max, per flow", "packets", float(r["flow_extent"]),
                        10.0 if k == 20 else None,
                        "~10 at SLF 20" if k == 20 else "grows with SLF; no number in the text"))
        rows.append(Row(case, "out of order, per flow", "%", r["flow_pct"], None, "< 0.01%"))
        rows.append(Row(case, "extent max, whole stream", "packets", float(r["stream_extent"])))
        rows.append(Row(case, "out of order, whole stream", "%", r["stream_pct"]))
        rows.append(Row(case, "trace SLF measured", "packets", r["slf_measured"], float(k)))
        rows.append(Row(case, "lost", "packets", float(r["lost"]), 0.0))
    return rows


def measure(ctx: Context) -> Result:
    packets = 20_000 if ctx.quick else 200_000
    res: dict[int, dict[str, Any]] = {}
    for k in SLFS:
        ctx.say(f"trace gen --slf {k} ({packets} packets)")
        sent = ctx.gen(ctx.workdir / f"slf{k}.pcap", packets=packets, flows=1000, size=SIZE,
                       slf=k, seed=1)
        stats = ctx.stats(sent)
        ctx.say(f"run --mode queuemem, SLF {k}")
        recv = ctx.workdir / f"out{k}.pcap"
        r = ctx.try_run(f"queuemem at SLF {k}", mode="queuemem", chain=CHAIN, in_=sent, out=recv)
        if r is None:
            ctx.step += 1
            continue
        ctx.say(f"trace reorder, SLF {k}")
        whole = ctx.reorder(sent, recv)
        flow, stream = per_flow_reordering(sent, recv)
        if stream.reordered != int(whole["reordered"]):
            ctx.errors.append(f"SLF {k}: per-stream count {stream.reordered} differs from "
                              f"nfpark trace reorder's {whole['reordered']}")
        res[k] = {"flow_extent": flow.extent_max, "flow_pct": flow.out_of_order_pct,
                  "flow_extent_mean": flow.extent_mean,
                  "stream_extent": int(whole["reordering_extent_max"]),
                  "stream_pct": float(whole["out_of_order_pct"]),
                  "lost": int(whole["lost"]), "slf_measured": float(stats["slf"])}
    notes = [
        "per flow, nfpark's QUEUE-MEM keeps order: a flow stays in one queue slice and that"
        " slice's batches complete in fill order when the NF returns headers in order. The"
        " paper's small per-flow reordering comes from hardware timing (AFC pause/resume delay,"
        " recirculation), which a software switch on 2 cores does not have.",
        "over the whole stream, batches of different slices interleave differently on the way"
        " out than on the way in, so `nfpark trace reorder` (which is not per flow) reports large"
        " reordering. It is not the paper's metric.",
    ]
    return Result(NAME, "QUEUE-MEM: packet reordering vs SLF (Q6, Fig. 11)", _panels(res),
                  _rows(res),
                  setup={"packets": packets, "flows": 1000, "size": SIZE, "proto": "udp",
                         "slf": list(SLFS), "chain": CHAIN,
                         "queuemem": "defaults: 31 queues, 6 slices, batch 20"},
                  paper_setup=PAPER_SETUP, notes=notes)


def fallback() -> Result:
    return Result(NAME, "QUEUE-MEM: packet reordering vs SLF (Q6, Fig. 11)", _panels({}), [],
                  paper_setup=PAPER_SETUP)
