"""The switch and the NF server as two processes over memif (docs/run.md "Separate processes").

The NF server (`--role nf`) listens on a memif socket; the switch (`--role switch`) replays the
trace through it. Header packets cross a real copy link here, so a lent original is freed by the
port and taken back from a copy at the merge. The output carries the same frames as the
one-process baseline (timestamps aside: whole packets that come back from another process lose
their input timestamp), every payload on its own header, and both processes end clean.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"

CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "payloadpark": ("payloadpark", ()),
    "payloadpark-all": ("payloadpark", ("--park-bytes", "all")),
    "nfslicer": ("nfslicer", ()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_switch_and_nf_server_in_two_processes(lab: Lab, tmp_path: Path, case: str) -> None:
    mode, extra = CASES[case]
    trace = lab.trace(3000, flows=100, seed=9, proto="mix", size="dc")
    base_out, _ = lab.baseline(trace, CHAIN)
    out = tmp_path / "out.pcap"
    two = cli.two_processes(trace, out, tmp_path / "nf.sock", mode, mode, CHAIN, extra, extra)
    nf_out, nf_err = two.nf_out, two.nf_err
    res = cli.result(two.switch)
    cli.assert_accounting(res)
    assert res["split"] > 0, res
    assert res["counters"].get("duplicate_headers", 0) == 0, res
    assert sorted(cli.frame_bytes(out)) == sorted(cli.frame_bytes(base_out)), (
        res["drops"], res["packets_out"], f"nf exit {two.nf_rc}: {two.nf_err[-1500:]}")
    assert cli.frame_bytes(out) == cli.frame_bytes(base_out), "same order as baseline"
    assert cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace)) > 0
    assert two.nf_rc == 0, f"nf role exit {two.nf_rc}\n{nf_err[-2000:]}"
    nf_res = json.loads(nf_out)
    assert nf_res["pools_full"] is True, nf_res
    assert nf_res["packets_in"] == res["packets_to_nf"], (nf_res, res)
    assert nf_res["nf"]["server.header_only"] == res["split"], nf_res
    assert nf_res["nf"]["counter.packets"] == res["packets_in"], nf_res
    assert nf_res["ports"]["nf_server.tx_packets"] == res["packets_from_nf"], nf_res
