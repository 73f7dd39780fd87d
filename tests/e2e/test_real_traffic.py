"""Real captures (tests/data) through baseline and every parking mode.

Real traffic has what generated traces lack: ARP, ICMP, IPv6, TCP handshakes, tiny and odd
frames, packets without ids. The parking modes must still give baseline's output exactly.
"""

from __future__ import annotations

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
MODES = ("baseline", *cli.ALL_PARK_MODES)


@pytest.mark.parametrize("mode", cli.ALL_PARK_MODES)
@pytest.mark.parametrize("name", cli.REAL_TRACES)
def test_real_capture_equals_baseline(lab: Lab, name: str, mode: str) -> None:
    trace = cli.DATA / name
    assert trace.is_file(), f"shared trace missing: {trace}"
    runs = lab.modes(trace, CHAIN, MODES)
    base_out, base_proc = runs["baseline"]
    out, proc = runs[mode]
    base, res = cli.result(base_proc), cli.result(proc)
    for r in (base, res):
        cli.assert_accounting(r)
        assert r["held_at_exit"] == 0
    n = len(cli.read_pcap(trace))
    assert res["packets_in"] == base["packets_in"] == n
    assert res["packets_out"] == base["packets_out"]
    assert res["nf_drops"] == base["nf_drops"]
    assert res["drops"].get("nf", 0) == sum(res["drops"].values()), "only the NF drops"
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, out)
    else:
        cli.assert_same_pcap(base_out, out)
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0, "a real capture has payloads large enough to park"
        assert res["merged"] == res["split"]
