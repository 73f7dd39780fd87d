"""`nfpark demo`: PayloadPark in one minute.

Generates a `dc` trace (PayloadPark's datacenter mix), runs it through the NAT chain twice —
baseline (whole packets to the NF server) and payloadpark (payloads parked at the switch) — and
prints what crossed the NF link, the goodput gain PayloadPark defines (header bytes per link
byte), the parking counters, and whether the two outputs are byte-identical.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from nfpark import dataplane
from nfpark.dataplane import WIRE_OVERHEAD


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = verbs.add_parser(
        "demo",
        help="PayloadPark vs baseline on a dc trace with a NAT chain",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--packets", type=int, default=200_000, help="trace length (default 200000)")
    p.add_argument("--flows", type=int, default=10_000, help="flows in the trace (default 10000)")
    p.add_argument("--chain", default="nat,counter", help="NF chain (default nat,counter)")
    p.add_argument("--dir", type=Path, default=None, help="keep the pcaps here (default: temp)")
    p.set_defaults(run=run_demo)


def _link(r: dict[str, Any]) -> tuple[int, int]:
    """Bytes on the NF link in both directions: frames only, and on the wire."""
    frames = int(r["bytes_to_nf"]) + int(r["bytes_from_nf"])
    pkts = int(r["packets_to_nf"]) + int(r["packets_from_nf"])
    return frames, frames + WIRE_OVERHEAD * pkts


def run_demo(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = args.dir or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        trace = dataplane.gen_trace(
            d / "dc.pcap", packets=args.packets, flows=args.flows, size="dc", seed=1
        )
        print(f"trace: {trace} ({args.packets} packets, dc mix, {args.flows} flows)")
        res = {}
        for mode in ("baseline", "payloadpark"):
            out = d / f"out_{mode}.pcap"
            res[mode] = dataplane.run(mode=mode, chain=args.chain, **{"in": trace}, out=out)
        base, pp = res["baseline"], res["payloadpark"]
        bf, bw = _link(base)
        pf, pw = _link(pp)
        hdr_pkts = int(base["packets_in"])
        print()
        print(f"{'':28}{'baseline':>14}{'payloadpark':>14}")
        print(f"{'packets to NF':28}{base['packets_to_nf']:>14}{pp['packets_to_nf']:>14}")
        print(f"{'bytes to NF':28}{base['bytes_to_nf']:>14}{pp['bytes_to_nf']:>14}")
        print(f"{'bytes from NF':28}{base['bytes_from_nf']:>14}{pp['bytes_from_nf']:>14}")
        print(f"{'NF link bytes/packet (wire)':28}{bw / hdr_pkts:>14.1f}{pw / hdr_pkts:>14.1f}")
        print(f"{'packets out':28}{base['packets_out']:>14}{pp['packets_out']:>14}")
        print()
        print(f"goodput gain on the NF link (header bytes per link byte): {bw / pw:.3f}x on the "
              f"wire, {bf / pf:.3f}x counting frame bytes only")
        c = pp["counters"]
        print("payloadpark counters: " + ", ".join(
            f"{k} {c[k]}" for k in ("splits", "merges", "not_split_small", "not_split_busy",
                                    "evictions", "premature_evictions", "explicit_drops")))
        ok = all(r["balanced"] and r["pools_full"] for r in (base, pp))
        print(f"in = out + drops, pools full at exit: {'yes' if ok else 'NO'}")
        same = dataplane.same_packets(d / "out_baseline.pcap", d / "out_payloadpark.pcap")
        print(f"outputs byte-identical: {'yes' if same else 'NO'}")
        return 0 if same and ok else 1
