"""The table of reproductions: one row per result. A simulator's entries are more rows."""

from __future__ import annotations

from types import ModuleType

from nfpark.repro import (
    nfslicer_bytes,
    nfslicer_latency,
    nicmem_nfv,
    payloadpark_goodput,
    queuemem_drops,
    queuemem_reorder,
    queuemem_tbps,
    reframer_slf,
)
from nfpark.repro.core import Repro


def _row(mod: ModuleType, paper: str, figure: str, description: str) -> Repro:
    """An entry whose module defines NAME, measure(ctx), steps(quick) and fallback()."""
    return Repro(mod.NAME, paper, figure, description, mod.measure, mod.steps, mod.fallback)


REPROS: tuple[Repro, ...] = (
    _row(payloadpark_goodput, "PayloadPark (CoNEXT'20)", "Figs. 7-9, 13; §6.2",
         "NF-link bytes, goodput gain and PCIe load vs frame size (256-1492 B, dc mix), "
         "160 B and 352 B parked, chain firewall,nat"),
    _row(nfslicer_bytes, "NFSlicer + nicmem (ASPLOS'22)", "NFSlicer §VI-D Fig. 15; nicmem §4.2",
         "bytes and descriptors across the NIC<->host boundary per packet, 1518 B and 64 B, "
         "modes baseline/split/nicmem/nfslicer"),
    _row(nfslicer_latency, "NFSlicer", "§VI-A Fig. 7, Figs. 8, 10, 15 (simulated)",
         "p50/p90 latency and PCIe bytes vs load (1-7 Mpps of 1518 B) in nfpark sim: baseline "
         "vs NFSlicer vs 160 B slices, L2 forwarder on one core"),
    _row(nicmem_nfv, "nicmem (ASPLOS'22)", "§6.3, Figs. 8, 11 (simulated)",
         "NAT throughput and latency at up to 200 Gbps of 1500 B in nfpark sim: host vs split "
         "vs nicmem over two 100 GbE NICs"),
    _row(queuemem_drops, "QUEUE-MEM (NSDI'26)", "Q2, Fig. 7",
         "output vs share of headers the NF drops (0, 10, 30, 50%), 1500 B UDP"),
    _row(queuemem_reorder, "QUEUE-MEM (NSDI'26)", "Q6, Fig. 11",
         "reordering extent and out-of-order share vs SLF (1, 8, 20), per flow and whole stream"),
    _row(queuemem_tbps, "QUEUE-MEM (NSDI'26)", "Figs. 15 and 7 (simulated)",
         "1.4 Tbps of 1.5 KB packets in nfpark sim: baseline vs PayloadPark-like 160 B vs "
         "QUEUE-MEM, and output vs header drops"),
    _row(reframer_slf, "Reframer (CoNEXT'22)", "§5.1, Fig. 12",
         "Reframer's output SLF vs T_buff (16, 64, 128 µs) on a paced trace with live flows"),
)


def by_name(name: str) -> Repro:
    for r in REPROS:
        if r.name == name:
            return r
    known = ", ".join(r.name for r in REPROS)
    raise ValueError(f"no reproduction named {name!r} (known: {known}; see `nfpark repro LIST`)")
