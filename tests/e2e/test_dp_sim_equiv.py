"""dp ≡ sim (issue 15): the dataplane and the simulator run the same logic. One generated trace
(packet ids in every payload) goes through `nfpark run` (pcap in, pcap out) and through
`nfpark sim` (the same pcap as the source, at a rate nothing drops, whole frames, the frames the
switch sends out written by `--out-pcap`): the output frames are the same bytes in the same
per-flow order, and the counters both engines keep — packets in and out, every drop reason, the
chain's counters, the NF endpoint's header/whole split, the mode's counters — are equal.

A mode is one line of MODES: its `nfpark sim` mode, and the config section both engines read
(`nfpark run CONFIG` and the scenario take the same `[park]`, `[queuemem]`, `[faults]`, ... keys).
Every mode also runs with `[faults]` (park/fault_injector.h in both engines, the same seed).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
# Chains that read no parse (nf::Nf::reads()): neither engine parses for them, and both count
# as touched only what they read (macswap: the Ethernet header; forward: nothing).
CHAINS = {"baseline": "macswap", "nicmem": "forward"}
TOUCHED = {"macswap": 14, "forward": 0}

# [faults], the same keys and seed for both engines (park/fault_injector.h in both). Drops,
# duplicates, corrupted tags and delays are drawn per packet in stream order, so both engines
# decide the same for each packet; reordering and forging act on neighbours within one chain
# burst, which is the engine's timing (tests/sim/fault_stage_test.cc runs them in the
# simulator). Not combined: dup and delay (a copy leaves at once while its delayed original
# waits, so the two interleave by timing); corrupt_tag where a corrupted token or tag is judged
# against what else is in flight (NFSlicer: an empty entry or another generation; QUEUE-MEM: which
# packets carry a tag depends on the batches' timing). The variants' fault-free runs (slices,
# a 96 B segment, 352 B and whole payloads, split) were equal before; they now carry faults too.
DUP = "[faults]\ndrop = 0.03\ndup = 0.03\ncorrupt_tag = 0.05\nseed = 5\n"
DELAY = "[faults]\ndrop = 0.03\ncorrupt_tag = 0.05\ndelay_us = 20\nseed = 9\n"
DROP_DUP = "[faults]\ndrop = 0.03\ndup = 0.03\nseed = 5\n"
DROP_DELAY = "[faults]\ndrop = 0.03\ndelay_us = 20\nseed = 9\n"

MODES: dict[str, tuple[str, str]] = {
    "baseline": ("baseline", ""),
    "baseline+faults": ("baseline", DUP),
    "payloadpark-160": ("payloadpark", "[park]\npark_bytes = 160\n"),
    "payloadpark-352+faults": ("payloadpark", "[park]\npark_bytes = 352\n" + DUP),
    "payloadpark-all+faults": ("payloadpark", '[park]\npark_bytes = "all"\n' + DELAY),
    # the simulator's switch has at most 64 queues a port: the P4's 31, for both engines
    "queuemem": ("queuemem", "[queuemem]\nqueues = 31\nslices = 6\nseal_after_us = 200\n"
                 "lost_after_us = 50000\n"),
    # lost headers: their batches are recovered lost_after later (the simulator's switch drops
    # what QUEUE-MEM refuses while every queue waits; the dataplane offers it again). No dup: a
    # small packet's copy is dropped when it joined its flow's batch (a parked tag) and leaves
    # twice when it went plainly whole, which is the batches' timing (joined_whole).
    "queuemem+faults": ("queuemem", "[queuemem]\nqueues = 31\nslices = 6\nseal_after_us = 200\n"
                        "lost_after_us = 300\n" + DROP_DELAY),
    "nfslicer": ("nfslicer", ""),
    "nfslicer-160+faults": ("nfslicer", "[nfslicer]\nslice_bytes = 160\nthr = 300\n" + DROP_DUP),
    "nicmem": ("nicmem", ""),
    "nicmem-pool+faults": ("nicmem", "[nicmem]\nheader_segment = 96\n" + DUP),
    # (split is nicmem's cut with the payload in host memory: nicmem runs both ways)
    "split+faults": ("split", DELAY),
    "payloadpark-160+box": ("payloadpark",
                            '[park]\npark_bytes = 160\n[reframe]\nplacement = "box"\n'),
}

# Reframer (T_buff, µs) in front of the chain: nfpark run's [run] reframe_us, the scenario's
# [nf_server] reframe_us; [reframe] placement as the case says. Reframer keeps per-flow order
# and holds nothing at the end, so the output frames (flow by flow) and every counter of the
# chain and the mode are the same; its own counters (batches, SLF) are the engines' timing.
# (In-chain Reframer in the simulator: tests/sim/reframe_sim_test.cc, against the box.)
REFRAMER: dict[str, int] = {"payloadpark-160+box": 64}


# Counters that say how the engine's timing formed QUEUE-MEM's batches, not what the logic
# decided: the dataplane reads the pcap in bursts of 32 at CPU speed and seals on the NF's trace
# clock, the simulator receives the frames one by one at 1 Gbps of virtual time, so batches
# fill (complete) in one and seal by age in the other, a small packet finds its flow's batch
# open (joined_whole, and its header returned) or not, and the peaks differ. The output frames,
# splits, merges and every drop are still equal, and so are the queues still paused at exit
# (paused_queues_at_exit: none, in both).
TIMING_COUNTERS: dict[str, set[str]] = {
    "queuemem": {"batches_complete", "batches_drained", "batches_sealed", "headers_returned",
                 "joined_whole", "peak_bytes", "peak_pkts",
                 # with lost headers: recoveries come lost_after later on each engine's clock
                 # (the dataplane's refused are offers it made again meanwhile), and a lost
                 # whole packet had joined its flow's batch (whole_lost) or not
                 "batches_waited", "recoveries", "refused", "whole_lost"},
}

# A duplicated header packet: the dataplane lends a parked payload to the header packet made from
# it (an mbuf reference), so a copy that comes back while the original is still out is refused
# (duplicate_header) and the original merges; the simulator's records are never lent
# (sim/sim_buffer.h), so the first one back merges and the other finds its slot free
# (premature_eviction). The same frames leave, and the same number of packets is dropped: the
# test compares these two reasons by their sum.
LENT: dict[str, dict[str, str]] = {
    "payloadpark": {"duplicate_header": "premature_eviction",
                    "duplicate_headers": "premature_evictions"},
    # NFSlicer's entry: the copy splices, the original finds it empty
    "nfslicer": {"duplicate_header": "expired", "drop_duplicate": "drop_expired"},
    # not lending: a payload whose header the NF lost is recovered lost_after later, or still
    # waits when the run ends; the end of a replay is another point of the NF's clock in the
    # dataplane (its trace time) than in the simulator (virtual time)
    "queuemem": {"drop.stranded_at_exit": "drop.header_lost"},
}

SCENARIO = """
[sim]
mode = "{mode}"
duration_ms = 200
full_bytes = true
reorder = false
[traffic]
source = "pcap"
pcap = "{pcap}"
timing = "rate"
rate_gbps = 1
loops = 1
[switch]
register_mb = 256
[nf_server]
chain = "{chain}"
{section}
"""


def by_flow(frames: list[bytes]) -> dict[object, list[bytes]]:
    flows: dict[object, list[bytes]] = defaultdict(list)
    for f in frames:
        p = cli.parse(f)
        flows[p.flow if p else None].append(f)
    return dict(flows)


@pytest.mark.parametrize("case", list(MODES))
def test_run_and_sim_give_the_same_packets_and_counters(lab: Lab, tmp_path: Path,
                                                         case: str) -> None:
    mode, section = MODES[case]
    trace = lab.trace(2000, flows=50, seed=3, proto="mix", size="dc")
    cfg = tmp_path / "run.toml"
    t_buff = REFRAMER.get(case)
    cfg.write_text((f"[run]\nreframe_us = {t_buff}\n" if t_buff else "") + section)
    run_out = tmp_path / "run.pcap"
    chain_spec = CHAINS.get(case, CHAIN)
    run = cli.run(trace, run_out, mode, chain_spec, config=cfg)
    cli.assert_accounting(run)

    scenario = tmp_path / "sim.toml"
    scenario.write_text(SCENARIO.format(mode=mode, pcap=trace, chain=chain_spec, section=(
        f"reframe_us = {t_buff}\n" if t_buff else "") + section))
    sim_out = tmp_path / "sim.pcap"
    p = cli.nfpark("sim", scenario, "--json", "--no-progress", "--out-pcap", sim_out)
    assert p.returncode == 0, cli.describe(p)
    sim = json.loads(p.stdout)["runs"][0]
    assert sim["balanced"] is True and sim["pools_full"] is True, sim
    assert sim["duplicates"] == run["duplicates"]

    # the same output frames, flow by flow in the same order
    run_frames, sim_frames = cli.frame_bytes(run_out), cli.frame_bytes(sim_out)
    assert len(run_frames) == len(sim_frames) == run["packets_out"]
    assert sorted(run_frames) == sorted(sim_frames)
    assert by_flow(run_frames) == by_flow(sim_frames), "per-flow order differs"

    # the same counters
    assert sim["packets_in"] == run["packets_in"]
    assert sim["packets_out"] == run["packets_out"]
    def lent_summed(d: dict[str, int]) -> dict[str, int]:
        d = dict(d)
        for dup, evicted in LENT.get(mode, {}).items():
            if dup in d and evicted in d:
                d[evicted] += d.pop(dup)
        return d

    run_drops, sim_drops = lent_summed(run["drops"]), lent_summed(sim["drops"])
    for reason in set(run_drops) & set(sim_drops):
        assert sim_drops[reason] == run_drops[reason], reason
    assert sim["drops_total"] == sum(run["drops"].values())
    c = sim["counters"]
    chain = {k: v for k, v in run["nf"].items() if not k.startswith("server.")}
    assert chain and {k: c["nf." + k] for k in chain} == chain
    for k in ("header_only", "whole"):
        assert c["nf_server." + k] == run["nf"]["server." + k], k
    # the mode's counters, the host-boundary bytes (baseline, nfslicer, nicmem, split) included
    # (the simulator names a mode's counters park.* or queuemem.*; the names after it are
    # the dataplane's)
    prefix = "queuemem." if mode == "queuemem" else "park."
    mode_ctr = run["counters"]
    timing = TIMING_COUNTERS.get(mode, set())
    assert timing <= set(mode_ctr), "a timing counter the dataplane no longer reports"
    mode_ctr = lent_summed({k: v for k, v in mode_ctr.items() if k not in timing})
    sim_ctr = lent_summed({k: c.get(prefix + k) for k in run["counters"] if k not in timing})
    assert mode_ctr and sim_ctr == mode_ctr
    # the faults injected, kind by kind (and each kind the case asks for happened)
    faults: dict[str, int] = run["faults"]
    assert {k: c.get("faults." + k) for k in faults} == faults
    assert ("[faults]" in section) == bool(faults)
    if faults:
        assert faults["dropped"] > 0
        assert faults["duplicated" if "dup =" in section else "delayed"] > 0
        assert faults["corrupted"] > 0 or "corrupt_tag" not in section or \
            mode in ("baseline", "nicmem", "split")  # no tags to corrupt
    if t_buff:  # Reframer ran in both: every packet in and out, each flow's first one at once,
        # the others held (batches and SLF are the timing's), nothing held at the end
        rf = {k: run["reframe"][k] for k in ("rx", "tx", "bypassed", "held", "flows.new",
                                             "coalesced", "held_now")}
        assert {k: c["reframe." + k] for k in rf} == rf
        assert rf["rx"] == run["packets_in"] and rf["held"] > 0 and rf["held_now"] == 0
    if chain_spec in TOUCHED:  # what the chain reads, for each packet the NF server saw
        hb = "park.host_boundary."
        assert c[hb + "nf_packets"] > 0
        assert c[hb + "nf_touched_bytes"] == TOUCHED[chain_spec] * c[hb + "nf_packets"]
    if mode == "payloadpark":
        assert run["split"] == c["park.splits"] > 0
    if mode == "nfslicer":  # payloads stayed on the NIC: fewer bytes crossed than arrived
        assert c["park.sliced"] > 0
    if mode in ("nfslicer", "nicmem"):
        assert 0 < c["park.host_boundary.rx_data_bytes"] < c["park.host_boundary.rx_wire_bytes"]


def test_out_pcap_needs_one_run(tmp_path: Path) -> None:
    scenario = tmp_path / "two.toml"
    scenario.write_text('[sim]\nduration_ms = 0.01\n[sweep]\n"traffic.rate_gbps" = [1, 2]\n')
    p = cli.nfpark("sim", scenario, "--out-pcap", tmp_path / "x.pcap")
    assert p.returncode == 2, cli.describe(p)
    assert p.stderr.count("\n") == 1 and "one run (it has 2)" in p.stderr, p.stderr
