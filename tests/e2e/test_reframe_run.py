"""Reframer in front of the chain (issue 7): `nfpark run --reframe T --pace` on a trace with
temporal locality raises the spatial locality factor and never reorders a flow."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
MODES = ("baseline", "payloadpark")


def reframe_trace(lab: Lab) -> Path:
    # 50 live flows out of 1000, interleaved (SLF 1): a flow's next packet comes ~50 packets
    # (~3 µs at 10 Gbit/s) later, well inside T_buff = 64 µs.
    return lab.trace(10000, flows=1000, active=50, size=64, proto="mix", seed=17)


def flow_ids(frames: list[bytes]) -> dict[tuple[bytes, bytes, int, int, int], list[int]]:
    ids: dict[tuple[bytes, bytes, int, int, int], list[int]] = defaultdict(list)
    for i, f in enumerate(frames):
        got = cli.payload_id(f)
        assert got is not None, f"output packet {i} has no id"
        parsed, pid = got
        ids[parsed.flow].append(pid)
    return ids


@pytest.mark.parametrize("mode", MODES)
def test_reframe_raises_slf_and_keeps_flow_order(lab: Lab, mode: str) -> None:
    trace = reframe_trace(lab)
    out, proc = lab.modes(trace, CHAIN, MODES, extra=("--reframe", "64", "--pace"))[mode]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert res["packets_out"] == res["packets_in"] == 10000
    rf = res["reframe"]
    for key in ("slf_in", "slf_out", "held", "useless_wait_us"):
        assert key in rf, key
    s_in, s_out = cli.stats(trace), cli.stats(out)
    assert s_in["slf"] == pytest.approx(1.0, abs=0.05)
    assert rf["slf_in"] == pytest.approx(s_in["slf"], abs=0.05)
    assert rf["slf_out"] > rf["slf_in"] + 0.3, rf
    assert rf["held"] > 0
    assert rf["useless_wait_us"] >= 0
    # `trace stats` on the output shows what Reframer claims.
    assert s_out["slf"] > s_in["slf"] + 0.3
    assert s_out["slf"] == pytest.approx(rf["slf_out"], rel=0.05)
    assert s_out["flows"] == s_in["flows"]
    # Every packet exactly once, and within each flow in the order it was sent.
    r = cli.reorder(trace, out)
    assert r["lost"] == r["duplicated"] == r["unmatched"] == 0, r
    assert r["reordered"] > 0, "Reframer regroups packets across flows"
    for flow, ids in flow_ids(cli.frame_bytes(out)).items():
        assert ids == sorted(ids), f"flow {flow} reordered: {ids[:20]}"
    cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace))


def test_reframe_output_equal_across_modes_as_multiset(lab: Lab) -> None:
    """Reframer and parking compose: payloadpark with Reframer emits baseline-with-Reframer's
    packets (emission timing may differ, so compared as a multiset)."""
    trace = reframe_trace(lab)
    runs = lab.modes(trace, CHAIN, MODES, extra=("--reframe", "64", "--pace"))
    cli.assert_same_multiset(runs["baseline"][0], runs["payloadpark"][0])
    res = cli.result(runs["payloadpark"][1])
    assert res["split"] == 0, "64 B frames have nothing to park"


def test_reframe_settings_reach_reframer(lab: Lab, tmp_path: Path) -> None:
    """Every [reframe] setting is the library's parameter: the flag and the TOML key act alike
    (max_burst 2: batches of at most 2), and self-bypass is steered by min_gain/probe_packets."""
    trace = reframe_trace(lab)
    conf = tmp_path / "rf.toml"
    conf.write_text("[reframe]\nmax_burst = 2\npriority = \"shortest_flow\"\n")
    runs = [cli.run(trace, tmp_path / "flag.pcap", "baseline", CHAIN, "--reframe", "64", "--pace",
                    "--reframe-max-burst", "2"),
            cli.run(trace, tmp_path / "toml.pcap", "baseline", CHAIN, "--reframe", "64", "--pace",
                    config=conf)]
    for res in runs:
        cli.assert_accounting(res)
        rf = res["reframe"]
        assert rf["flush.full"] > 1000, rf
        assert rf["avg_batch_milli"] <= 2000, rf
        assert rf["self_bypass.passed"] == 0, rf
    # A gain no regrouping reaches: Reframer probes 64 packets, then passes 1000 through.
    out = tmp_path / "bypass.pcap"
    res = cli.run(trace, out, "baseline", CHAIN, "--reframe", "64", "--pace",
                  "--reframe-min-gain", "100", "--reframe-probe", "64",
                  "--reframe-bypass-packets", "1000")
    cli.assert_accounting(res)
    rf = res["reframe"]
    assert rf["self_bypass.periods"] >= 2, rf
    assert 5000 < rf["self_bypass.passed"] < 10000, rf
    r = cli.reorder(trace, out)
    assert r["lost"] == r["duplicated"] == r["unmatched"] == 0, r
    for flow, ids in flow_ids(cli.frame_bytes(out)).items():
        assert ids == sorted(ids), f"flow {flow} reordered: {ids[:20]}"
    # A combination the library refuses is one clear error before the run.
    bad = cli.start_run(trace, tmp_path / "bad.pcap", "baseline", CHAIN, "--reframe", "64",
                        "--reframe-flow-timeout", "0.00001")
    assert bad.returncode != 0
    assert "[reframe]" in bad.stderr and "flow_timeout" in bad.stderr, bad.stderr
