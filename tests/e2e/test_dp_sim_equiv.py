"""dp ≡ sim (issue 15): the dataplane and the simulator run the same logic. One generated trace
(packet ids in every payload) goes through `nfpark run` (pcap in, pcap out) and through
`nfpark sim` (the same pcap as the source, at a rate nothing drops, whole frames, the frames the
switch sends out written by `--out-pcap`): the output frames are the same bytes in the same
per-flow order, and the counters both engines keep — packets in and out, every drop reason, the
chain's counters, the NF endpoint's header/whole split, the mode's counters — are equal.

A mode is one line of MODES: its `nfpark sim` mode, and the config section both engines read
(`nfpark run CONFIG` and the scenario take the same `[park]`, `[queuemem]`, ... keys).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"

MODES: dict[str, tuple[str, str]] = {
    "baseline": ("baseline", ""),
    "payloadpark-160": ("payloadpark", "[park]\npark_bytes = 160\n"),
    "payloadpark-352": ("payloadpark", "[park]\npark_bytes = 352\n"),
    "payloadpark-all": ("payloadpark", '[park]\npark_bytes = "all"\n'),
    # the simulator's switch has at most 64 queues a port: the P4's 31, for both engines
    "queuemem": ("queuemem", "[queuemem]\nqueues = 31\nslices = 6\nseal_after_us = 200\n"
                 "lost_after_us = 50000\n"),
    "nfslicer": ("nfslicer", ""),
    "nfslicer-160": ("nfslicer", "[nfslicer]\nslice_bytes = 160\nthr = 300\n"),
    "nicmem": ("nicmem", ""),
    "nicmem-pool": ("nicmem", "[nicmem]\nheader_segment = 96\n"),
    "split": ("split", ""),
}

# Counters that say how the engine's timing formed QUEUE-MEM's batches, not what the logic
# decided: the dataplane reads the pcap in bursts of 32 at CPU speed and seals on the NF's trace
# clock, the simulator receives the frames one by one at 1 Gbps of virtual time, so batches
# fill (complete) in one and seal by age in the other, a small packet finds its flow's batch
# open (joined_whole, and its header returned) or not, and the peaks differ. The output frames,
# splits, merges and every drop are still equal, and so are the queues still paused at exit
# (paused_queues_at_exit: none, in both).
TIMING_COUNTERS: dict[str, set[str]] = {
    "queuemem": {"batches_complete", "batches_drained", "batches_sealed", "headers_returned",
                 "joined_whole", "peak_bytes", "peak_pkts"},
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
    cfg.write_text(section)
    run_out = tmp_path / "run.pcap"
    run = cli.run(trace, run_out, mode, CHAIN, config=cfg)
    cli.assert_accounting(run)

    scenario = tmp_path / "sim.toml"
    scenario.write_text(SCENARIO.format(mode=mode, pcap=trace, chain=CHAIN, section=section))
    sim_out = tmp_path / "sim.pcap"
    p = cli.nfpark("sim", scenario, "--json", "--no-progress", "--out-pcap", sim_out)
    assert p.returncode == 0, cli.describe(p)
    sim = json.loads(p.stdout)["runs"][0]
    assert sim["balanced"] is True and sim["pools_full"] is True, sim

    # the same output frames, flow by flow in the same order
    run_frames, sim_frames = cli.frame_bytes(run_out), cli.frame_bytes(sim_out)
    assert len(run_frames) == len(sim_frames) == run["packets_in"]
    assert sorted(run_frames) == sorted(sim_frames)
    assert by_flow(run_frames) == by_flow(sim_frames), "per-flow order differs"

    # the same counters
    assert sim["packets_in"] == run["packets_in"]
    assert sim["packets_out"] == run["packets_out"]
    for reason in set(run["drops"]) & set(sim["drops"]):
        assert sim["drops"][reason] == run["drops"][reason], reason
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
    mode_ctr = {k: v for k, v in mode_ctr.items() if k not in timing}
    assert mode_ctr and {k: c.get(prefix + k) for k in mode_ctr} == mode_ctr
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
