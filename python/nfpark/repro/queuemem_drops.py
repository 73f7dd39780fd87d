"""QUEUE-MEM (NSDI'26) Q2, Fig. 7: output throughput vs the share of headers the NF drops.

nfpark runs 1500 B UDP packets through `--mode queuemem` with the NF server dropping a fraction x
of what it receives (`--nf-drop x`, silently: no explicit-drop notification reaches the switch for
a lost header), for x = 0, 10, 30, 50 %. Every payload is split, so each drop is a header drop and
its batch must be recovered. The paper: the output is "exactly reduced by the drop percentage".
"""

from __future__ import annotations

from typing import Any

from nfpark.repro.core import Context, Panel, Result, Row, Series, X

NAME = "queuemem_drops"
DROPS = (0.0, 0.1, 0.3, 0.5)
SIZE = 1500
CHAIN = "forward"

PAPER_SETUP = (
    "Tofino 2 switch (P4), payloads held in paused egress queues (batch 20), headers to an NF "
    "server that drops a set share of them; synthetic trace of 1.5 KB packets at 1.4 Tbps input; "
    "output throughput measured at the switch (Fig. 7).")


def steps(quick: bool) -> int:
    return 1 + len(DROPS)


def _panels(res: dict[float, dict[str, Any]]) -> list[Panel]:
    xs: list[X] = [100.0 * d for d in DROPS]
    out = [Series("nfpark: packets out / in", "nfpark", xs,
                  [100.0 * res[d]["out"] if d in res else None for d in DROPS]),
           Series("nfpark: bytes out / in", "nfpark", xs,
                  [100.0 * res[d]["bytes_out"] if d in res else None for d in DROPS]),
           Series("paper: output = (1 - x) of input ('exactly reduced')", "paper", xs,
                  [100.0 * (1 - d) for d in DROPS], "line", "Q2 text; Fig. 7 values not given"),
           Series("paper: 1.4 Tbps in, 50% drops -> 700 Gbps out", "paper", [50.0], [50.0],
                  "points", "Q2 text")]
    rec = [Series("nfpark: batches recovered", "nfpark", xs,
                  [float(res[d]["recoveries"]) if d in res else None for d in DROPS]),
           Series("nfpark: peak packets held", "nfpark", xs,
                  [float(res[d]["peak_pkts"]) if d in res else None for d in DROPS])]
    return [
        Panel("Output vs header drops (UDP, 1500 B)", "headers dropped by the NF, x [%]",
              "output / input [%]", out),
        Panel("Recovery work (nfpark only: the paper gives no numbers)",
              "headers dropped by the NF, x [%]", "count [batches, packets]", rec),
    ]


def _rows(res: dict[float, dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    for d in DROPS:
        if d not in res:
            continue
        r = res[d]
        case = f"x = {100 * d:g}%"
        rows.append(Row(case, "packets out / in", "%", 100.0 * r["out"], 100.0 * (1 - d),
                        "'exactly reduced by the drop percentage'"))
        rows.append(Row(case, "headers actually dropped", "%", 100.0 * r["dropped"]))
        rows.append(Row(case, "out / (in - dropped headers)", "%", 100.0 * r["out_of_kept"], 100.0))
        rows.append(Row(case, "batches recovered", "", float(r["recoveries"])))
        rows.append(Row(case, "id mismatches (mis-merge guard)", "", float(r["id_mismatch"]), 0.0))
        rows.append(Row(case, "queues paused at exit", "", float(r["paused_at_exit"]), 0.0))
    return rows


def measure(ctx: Context) -> Result:
    packets = 5_000 if ctx.quick else 200_000
    ctx.say(f"trace gen --size {SIZE} ({packets} packets, udp)")
    trace = ctx.gen(ctx.workdir / "t.pcap", packets=packets, flows=1000, size=SIZE, seed=1)
    res: dict[float, dict[str, Any]] = {}
    for d in DROPS:
        ctx.say(f"run --mode queuemem --nf-drop {d:g}")
        r = ctx.try_run(f"queuemem --nf-drop {d:g}", mode="queuemem", chain=CHAIN, in_=trace,
                        nf_drop=d if d else None, seed=1)
        if r is None:
            continue
        c = r["counters"]
        n = int(r["packets_in"])
        dropped = int(r["faults"].get("dropped", 0)) if r.get("faults") else 0
        if not (r["balanced"] and r["pools_full"]):
            ctx.errors.append(f"--nf-drop {d:g}: in != out + drops or pools not full")
        res[d] = {"out": int(r["packets_out"]) / n,
                  "bytes_out": int(r["bytes_out"]) / int(r["bytes_in"]),
                  "dropped": dropped / n,
                  "out_of_kept": int(r["packets_out"]) / max(n - dropped, 1),
                  "recoveries": int(c.get("recoveries", 0)),
                  "peak_pkts": int(c.get("peak_pkts", 0)),
                  "id_mismatch": int(c.get("drop.id_mismatch", 0)),
                  "paused_at_exit": int(c.get("paused_queues_at_exit", 0)),
                  "stranded_at_exit": int(c.get("drop.stranded_at_exit", 0))}
    notes = [
        "--nf-drop drops a random share x of the packets the NF server receives; the share"
        " actually dropped is in rows ('headers actually dropped') and differs from x by sampling.",
        "payloads whose header is lost are dropped at recovery (drop.header_lost) or, for the"
        " last batches, at the end of the run (drop.stranded_at_exit); no payload leaves with"
        " another packet's header (id mismatches 0).",
    ]
    return Result(NAME, "QUEUE-MEM: output vs header-drop rate (Q2, Fig. 7)", _panels(res),
                  _rows(res),
                  setup={"packets": packets, "flows": 1000, "size": SIZE, "proto": "udp",
                         "chain": CHAIN, "nf_drop": list(DROPS), "fault_seed": 1,
                         "queuemem": "defaults: 31 queues, 6 slices, batch 20"},
                  paper_setup=PAPER_SETUP, notes=notes)


def fallback() -> Result:
    return Result(NAME, "QUEUE-MEM: output vs header-drop rate (Q2, Fig. 7)", _panels({}), [],
                  paper_setup=PAPER_SETUP)
