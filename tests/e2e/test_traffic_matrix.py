"""Issue 13's acceptance matrix: every mode, with and without Reframer, on traffic nfpark did not
make and on the edge trace, with two chains — the same packets as baseline, per-flow order kept.

Inputs:
- `captures`: every capture of tests/data (12 files from other tools, machines and years: Linux
  cooked GRO frames, BSD loopback, raw IP, QinQ, a header-only snaplen-96 capture, ICMPv6, IPv6
  routing headers, MPTCP, a botnet capture...) followed by the edge trace (jumbo and GRO frames to
  64 KiB, truncated records, ICMP echo and errors, fragments, IPv6 extension headers, QinQ and
  802.1ad, MPLS, ARP, unknown ethertypes, DSCP 63), as one pcapng of 13 interfaces, each source
  retimed to start 1 s after the previous one ends (see the note on time jumps below).
- `mixed`: a generated trace of 100 flows, datacenter sizes, SLF 4 (the trace on which QUEUE-MEM
  used to reorder 11.9% of packets within flows), with `nat,counter`.

For each input, chain (`nat,counter`, `firewall,nat,lb`) and mode (baseline, payloadpark
160/352/all, queuemem, nfslicer, nicmem, split; each also with `--reframe`; PayloadPark and
QUEUE-MEM also with the NF server on its own lcore): exit 0, counters
balanced, pools full, nothing dropped that baseline keeps, the same frames with the same wire
lengths as baseline, and `nfpark trace reorder` against baseline: nothing lost, duplicated or
unmatched, 0 packets out of order within their flow. Modes that keep global order (all but
QUEUE-MEM's batches and Reframer's regrouping) must give baseline's bytes in baseline's order.

Time: the chain sees a packet at (about) its own trace time (park/nf_burst.h: a burst runs in
segments within 1 ms of trace time), so what shares a burst — which parking, `--nf-lcore` and
its timing change — does not change a time-out (a fragment once found its NAT state expired,
3 s of a sparse capture having entered its burst, in one QUEUE-MEM --nf-lcore run in 15).
Reframer changes the order across flows in which the chain meets packets: with `--reframe` the
reference is `baseline --reframe` (the same NF server, no parking); the NF drops and the
packet counts must still equal plain baseline's. The generated `mixed` trace is matched by
packet id against plain baseline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAINS = ("nat,counter", "firewall,nat,lb")
REFRAME = ("--reframe", "50")

SPECS: dict[str, tuple[str, tuple[str, ...]]] = {
    **cli.MODE_SPECS,
    **{f"{name}+reframe": (mode, (*extra, *REFRAME)) for name, (mode, extra) in
       cli.MODE_SPECS.items()},
    "payloadpark-nf-lcore": ("payloadpark", ("--nf-lcore",)),
    "queuemem-nf-lcore": ("queuemem", ("--nf-lcore",)),
}


def _input(lab: Lab, name: str) -> Path:
    if name == "mixed":
        return lab.trace(3000, flows=100, size="dc", slf=4, seed=13)
    path = lab.root / "captures-and-edge.pcapng"
    if not path.exists():
        edge = cli.edge_trace(lab.root / "edge-for-matrix.pcap")
        cli.pcapng_of(path, [*(cli.DATA / n for n in cli.DATA_TRACES), edge], gap_ns=10**9)
    return path


@pytest.mark.parametrize("spec", sorted(SPECS))
@pytest.mark.parametrize(("inp", "chain"), [*(("captures", c) for c in CHAINS),
                                            ("mixed", CHAINS[0])])
def test_same_packets_as_baseline_in_flow_order(lab: Lab, inp: str, chain: str,
                                                spec: str) -> None:
    trace = _input(lab, inp)
    base, base_res = lab.baseline(trace, chain)
    runs = lab.batch(trace, chain, SPECS)
    out, proc = runs[spec]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert res["held_at_exit"] == 0
    mode, extra = SPECS[spec]
    reframe = "--reframe" in extra
    assert res["packets_in"] == base_res["packets_in"]
    # Only the NFs drop, and they drop what they drop in baseline (Reframer included: a later
    # fragment or an ICMP error keeps its place behind what the NAT needs first).
    assert res["nf_drops"] == base_res["nf_drops"], res["drops"]
    assert res["packets_out"] == base_res["packets_out"], res["drops"]
    # The reference: baseline with the same NF server (see the module note on time).
    ref = runs["baseline+reframe"][0] if reframe else base
    b, o = cli.read_pcap(ref), cli.read_pcap(out)
    assert sorted((f.data, f.wire_len) for f in o) == sorted((f.data, f.wire_len) for f in b)
    order = cli.reorder(base if inp == "mixed" else ref, out)  # mixed: matched by packet id
    assert (order["lost"], order["duplicated"], order["unmatched"]) == (0, 0, 0), order
    assert order["flow_reordered"] == 0, order
    if mode != "queuemem" and not reframe:
        assert [f.data for f in o] == [f.data for f in b], cli.first_difference(
            [f.data for f in b], [f.data for f in o])
    if mode != "baseline":
        assert res["split"] > 0 or mode in ("nicmem", "split"), res
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["merged"] == res["split"], res  # nothing evicted: every payload came back
    if inp == "captures":
        # Only the NFs drop; no frame is too long for a port; the GRO frames of the edge trace
        # (to 65589 B) travel, and the two above the tag's 16-bit length go whole.
        assert sum(res["drops"].values()) == res["drops"].get("nf", 0), res["drops"]
        assert max(f.wire_len for f in o) == 65589
        if mode in ("payloadpark", "queuemem"):
            assert res["counters"]["not_split_large"] == 2, res["counters"]
        if spec == "payloadpark" and chain == CHAINS[0]:  # tshark reads the lengths we wrote
            assert cli.tshark_lengths(out) == [(f.wire_len, len(f.data)) for f in o]
