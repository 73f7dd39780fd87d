"""Faults on the NF side and a full store: counted, balanced, never a payload on the wrong header.

Issue 3 ("Bad input and faults"), issue 4 (faults for nfslicer) and issue 5 (QUEUE-MEM's
header-drop sweep). Every run: exit 0, `balanced`, pools full, in + dup = out + Σ drops, and every
output packet carries exactly the payload it was sent with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
KEY = "00112233445566778899aabbccddeeff"


def fault_trace(lab: Lab) -> Path:
    return lab.trace(3000, flows=100, size="dc", proto="mix", seed=9)


def check_run(trace: Path, out: Path, res: cli.Json) -> list[bytes]:
    cli.assert_accounting(res)
    assert res["held_at_exit"] == 0, res
    frames = cli.frame_bytes(out)
    assert len(frames) == res["packets_out"]
    cli.assert_own_payloads(frames, cli.frame_bytes(trace))
    return frames


FAULTS: dict[str, list[str]] = {
    "drop": ["--nf-drop", "0.1"],
    "dup": ["--nf-dup", "0.1"],
    "reorder": ["--nf-reorder", "0.3"],
    "corrupt": ["--nf-corrupt-tag", "0.1"],
    "delay": ["--nf-delay-us", "40"],
    "all": ["--nf-drop", "0.05", "--nf-dup", "0.05", "--nf-reorder", "0.1",
            "--nf-corrupt-tag", "0.05", "--nf-delay-us", "20", "--seed", "3"],
}

FAULT_MODES = ("payloadpark", "queuemem", "nfslicer")


def fault_cases() -> list[object]:
    cases: list[object] = []
    for mode in FAULT_MODES:
        for name in FAULTS:
            marks: list[pytest.MarkDecorator] = []
            cases.append(pytest.param(mode, name, marks=marks, id=f"{mode}-{name}"))
    return cases


@pytest.mark.parametrize(("mode", "fault"), fault_cases())
def test_nf_faults(lab: Lab, mode: str, fault: str) -> None:
    trace = fault_trace(lab)
    base_out, _ = lab.baseline(trace, CHAIN)
    specs = {f"{m}-{f}": (m, args) for m in FAULT_MODES for f, args in FAULTS.items()}
    out, proc = lab.batch(trace, CHAIN, specs)[f"{mode}-{fault}"]
    res = cli.result(proc)
    frames = check_run(trace, out, res)
    f, drops, n = res["faults"], res["drops"], res["packets_in"]
    assert res["split"] > 0
    if fault == "drop":
        assert f["dropped"] > 0.05 * n
        assert drops["fault_injected"] == f["dropped"]
        assert res["packets_out"] == n - f["dropped"], "only the dropped packets may be missing"
    elif fault == "dup":
        assert f["duplicated"] > 0.05 * n
        # Every packet leaves at least once; extra copies only of packets that were sent.
        assert set(frames) == set(cli.frame_bytes(base_out))
        assert n <= res["packets_out"] <= n + f["duplicated"]
    elif fault in ("reorder", "delay"):
        key = "reordered" if fault == "reorder" else "delayed"
        assert f[key] > 0
        assert sum(drops.values()) == 0, drops
        cli.assert_same_multiset(base_out, out)
    elif fault == "corrupt":
        assert f["corrupted"] > 0.05 * n
        # nfpark/QUEUE-MEM tags carry a check (bad_tag); NFSlicer's token has none, so a
        # corrupted token names no live entry: expired or generation_mismatch.
        bad = sum(drops.get(k, 0) for k in ("bad_tag", "bad_token", "expired",
                                             "generation_mismatch"))
        assert bad == f["corrupted"], "every corrupted tag is counted and dropped"
        assert res["packets_out"] == n - f["corrupted"], "a corrupted tag is never merged"
    else:
        assert f["dropped"] > 0 and f["duplicated"] > 0 and f["reordered"] > 0
        assert f["delayed"] > 0
        if mode != "nfslicer":
            assert f["corrupted"] > 0
            assert drops["bad_tag"] >= f["corrupted"]


@pytest.mark.parametrize("fmt", [["--tag-format", "payloadpark"], ["--tag-key", KEY],
                                 ["--tag-format", "nfpark", "--tag-key", KEY]],
                         ids=["payloadpark-7B", "keyed", "nfpark-keyed"])
def test_tag_formats_equal_baseline(lab: Lab, tmp_path: Path, fmt: list[str]) -> None:
    trace = fault_trace(lab)
    base_out, base = lab.baseline(trace, CHAIN)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "payloadpark", CHAIN, *fmt)
    check_run(trace, out, res)
    cli.assert_same_pcap(base_out, out)
    assert res["split"] > 0
    assert res["bytes_to_nf"] < base["bytes_to_nf"]


def test_payloadpark_tag_is_smaller_than_nfpark_tag(lab: Lab, tmp_path: Path) -> None:
    """The 7-byte PayloadPark tag puts 24 - 7 = 17 bytes less per packet on the NF link (split
    headers and whole packets both carry a tag)."""
    trace = fault_trace(lab)
    a = cli.run(trace, tmp_path / "a.pcap", "payloadpark", CHAIN)
    b = cli.run(trace, tmp_path / "b.pcap", "payloadpark", CHAIN, "--tag-format", "payloadpark")
    assert a["split"] == b["split"] > 0
    assert a["packets_to_nf"] == b["packets_to_nf"] == a["packets_in"]
    assert a["bytes_to_nf"] - b["bytes_to_nf"] == 17 * a["packets_to_nf"]
    assert a["bytes_from_nf"] - b["bytes_from_nf"] == 17 * a["packets_from_nf"]


@pytest.mark.parametrize("fmt", [["--tag-format", "payloadpark"], ["--tag-key", KEY]],
                         ids=["payloadpark-7B", "keyed"])
def test_corrupted_tags_in_every_format_are_never_merged(lab: Lab, tmp_path: Path,
                                                          fmt: list[str]) -> None:
    trace = fault_trace(lab)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "payloadpark", CHAIN, "--nf-corrupt-tag", "0.3", *fmt)
    check_run(trace, out, res)
    corrupted = res["faults"]["corrupted"]
    assert corrupted > 0.2 * res["packets_in"]
    # The 7-byte tag's 16-bit MAC lets a flipped index or clock bit through once in 2^16: that
    # tag then names no live slot (generations are unique) and is dropped as a late header.
    late = res["drops"].get("premature_eviction", 0) if "payloadpark" in fmt else 0
    assert res["drops"]["bad_tag"] + late == corrupted
    assert res["packets_out"] == res["packets_in"] - corrupted


@pytest.mark.parametrize("mode", ["payloadpark", "queuemem", "nfslicer"])
def test_nf_drops_with_and_without_notification(lab: Lab, tmp_path: Path, mode: str) -> None:
    """A rate limiter drops most packets; with the explicit-drop notification the switch frees
    the parked payloads at once, without it they are reclaimed later (EXP or at exit)."""
    trace = fault_trace(lab)
    cfg = tmp_path / "rl.toml"
    cfg.write_text("[nf.ratelimit]\nrate_bps = 8000\nburst_bytes = 3000\n")
    results = {}
    for notify in (True, False):
        out = tmp_path / f"out-{notify}.pcap"
        extra = [] if notify else ["--no-drop-notify"]
        res = cli.run(trace, out, mode, "counter,ratelimit", *extra, config=cfg)
        check_run(trace, out, res)
        assert res["nf_drops"] > 0.5 * res["packets_in"], res
        assert res["packets_out"] == res["packets_in"] - res["nf_drops"]
        results[notify] = res
    on, off = results[True]["nf"], results[False]["nf"]
    assert off["server.drop_notified"] == 0
    assert off["server.drop_freed"] == results[False]["nf_drops"]
    if mode in ("payloadpark", "queuemem"):
        assert on["server.drop_notified"] == results[True]["nf_drops"]
        c = results[True]["counters"]
        explicit = c.get("explicit_drops", 0) + c.get("drop.explicit", 0)
        assert explicit > 0


def test_dropped_headers_slots_are_reclaimed_by_exp(lab: Lab, tmp_path: Path) -> None:
    trace = fault_trace(lab)
    cfg = tmp_path / "rl.toml"
    cfg.write_text("[nf.ratelimit]\nrate_bps = 8000\nburst_bytes = 3000\n")
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "payloadpark", "counter,ratelimit", "--no-drop-notify",
                  "--slots", "256", config=cfg)
    check_run(trace, out, res)
    c = res["counters"]
    assert c["evictions"] > 0
    assert c["stranded_at_exit"] <= 256


def test_full_store_sends_packets_whole(lab: Lab, tmp_path: Path) -> None:
    """Few slots, entries that never expire: the store is full, packets go whole, none lost."""
    trace = fault_trace(lab)
    base_out, _ = lab.baseline(trace, CHAIN)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "payloadpark", CHAIN, "--slots", "8", "--max-exp", "255")
    check_run(trace, out, res)
    assert res["counters"]["not_split_busy"] > 0
    assert res["split"] > 0
    assert sum(res["drops"].values()) == 0, res["drops"]
    cli.assert_same_pcap(base_out, out)


def test_tiny_store_with_eviction_never_mismerges(lab: Lab, tmp_path: Path) -> None:
    """EXP 1 and 8 slots under delayed headers: payloads are evicted before their header is
    back. They are counted as premature evictions; the late headers never take a new payload."""
    trace = fault_trace(lab)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "payloadpark", CHAIN, "--slots", "8", "--max-exp", "1",
                  "--nf-delay-us", "20")
    check_run(trace, out, res)
    assert res["drops"]["premature_eviction"] > 0
    assert res["counters"]["premature_evictions"] == res["drops"]["premature_eviction"]


SWEEP = (0.0, 0.1, 0.3, 0.5)


@pytest.mark.parametrize("x", SWEEP)
def test_queuemem_header_drop_sweep(lab: Lab, x: float) -> None:
    """QUEUE-MEM Q2: the NF drops x of the headers of UDP traffic; (1 - x) of the input leaves
    within one point, no mis-merge, no queue left paused, pools full."""
    trace = lab.trace(20000, flows=500, size=200, proto="udp", seed=4)
    specs = {str(v): ("queuemem", ("--nf-drop", str(v), "--seed", "7")) for v in SWEEP}
    out, proc = lab.batch(trace, CHAIN, specs)[str(x)]
    res = cli.result(proc)
    check_run(trace, out, res)
    share = res["packets_out"] / res["packets_in"]
    assert abs(share - (1 - x)) <= 0.01, f"out/in = {share:.4f}, expected {1 - x:.2f} +- 0.01"
    c = res["counters"]
    assert c["paused_queues_at_exit"] == 0
    assert c["held_pkts"] == 0
    assert res["split"] == res["packets_in"], "every UDP packet with 158 B payload is split"
    if x > 0:
        # Each lost header costs exactly its payload: dropped at a recovery while traffic flows
        # (a header sent later back lost_after ago on the NF's clock, here trace time: this
        # 3.5 ms trace is shorter than lost_after) or at the end of the run (stranded).
        assert c["drop.header_lost"] + c["drop.stranded_at_exit"] == res["faults"]["dropped"]
        assert res["drops"]["fault_injected"] == res["faults"]["dropped"]
    else:
        assert c["recoveries"] == 0
        assert res["packets_out"] == res["packets_in"]


def test_undersized_queuemem_loses_nothing(lab: Lab, tmp_path: Path) -> None:
    """4 queues of 3 payloads hold fewer packets than a burst of 32 sends before its headers are
    back. A full store is not a lost header: packets of flows with nothing waiting go whole,
    packets of a waiting flow wait in the traffic ring (back-pressure). Nothing is dropped,
    every flow keeps its order, nothing is stuck."""
    trace = fault_trace(lab)
    base_out, _ = lab.baseline(trace, CHAIN)
    cfg = tmp_path / "qm.toml"
    cfg.write_text("[queuemem]\nqueues = 4\nslices = 2\nbatch = 3\nheader_array = 64\n")
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "queuemem", CHAIN, config=cfg)
    check_run(trace, out, res)
    c = res["counters"]
    assert sum(res["drops"].values()) == 0, res["drops"]
    assert res["packets_out"] == res["packets_in"]
    assert c["recoveries"] == 0
    assert c["not_split_store_full"] > 0 and c["refused"] > 0
    assert c["paused_queues_at_exit"] == 0 and c["held_pkts"] == 0
    assert c["peak_pkts"] <= 4 * 3
    cli.assert_same_multiset(base_out, out)
    assert cli.reorder(base_out, out)["flow_reordered"] == 0
