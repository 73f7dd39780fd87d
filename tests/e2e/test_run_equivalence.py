"""Functional equivalence: every parking mode's output equals baseline's (issues 3, 4, 5).

For generated traces (UDP, TCP, mixed, `dc` sizes, VLAN, IPv6) and the NAT chain, the output pcap
of payloadpark, nfslicer, nicmem and split is byte-identical to baseline's; queuemem's is the same
multiset of frames. Every output payload sits on its own header (generator ids), and every run
accounts for every packet with all pools full at exit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"

TRACES: dict[str, dict[str, str | int | float | bool]] = {
    "udp": {"proto": "udp", "size": "dc"},
    "tcp": {"proto": "tcp", "size": "dc"},
    "mix-imix": {"proto": "mix", "size": "imix"},
    "vlan": {"proto": "mix", "size": "dc", "vlan": True},
    "ipv6": {"proto": "mix", "size": "dc", "ipv6": 0.5},
}


MODES = ("baseline", *cli.ALL_PARK_MODES)


def outcome(lab: Lab, name: str, mode: str) -> tuple[Path, Path, cli.Json]:
    """(trace, output, JSON) of trace `name` in `mode`; all modes of a trace run together."""
    trace = lab.trace(3000, flows=120, seed=5, **TRACES[name])
    out, proc = lab.modes(trace, CHAIN, MODES)[mode]
    res = cli.result(proc)
    assert res["mode"] == mode
    cli.assert_accounting(res)
    return trace, out, res


@pytest.mark.parametrize("name", list(TRACES))
def test_baseline_carries_every_packet_with_its_payload(lab: Lab, name: str) -> None:
    trace, out, res = outcome(lab, name, "baseline")
    assert res["packets_in"] == res["packets_out"] == 3000
    assert res["nf_drops"] == 0
    inp, got = cli.frame_bytes(trace), cli.frame_bytes(out)
    assert cli.assert_own_payloads(got, inp) == 3000
    # The NAT really ran: IPv4 sources are rewritten, so the output is not the input.
    assert got != inp
    assert res["nf"]["nat.outbound"] > 0


@pytest.mark.parametrize("mode", cli.ALL_PARK_MODES)
@pytest.mark.parametrize("name", list(TRACES))
def test_mode_output_equals_baseline(lab: Lab, name: str, mode: str) -> None:
    _, base_out, base = outcome(lab, name, "baseline")
    trace, out, res = outcome(lab, name, mode)
    assert res["packets_in"] == res["packets_out"] == 3000, res
    assert sum(res["drops"].values()) == 0, res["drops"]
    assert res["held_at_exit"] == 0
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, out)
        r = cli.reorder(trace, out)
        assert r["lost"] == r["duplicated"] == r["unmatched"] == 0, r
    else:
        cli.assert_same_pcap(base_out, out)
    assert cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace)) == 3000
    # The NF chain saw every packet, as in baseline.
    assert res["nf"]["counter.packets"] == base["nf"]["counter.packets"]
    assert res["nf"]["counter.bytes"] == base["nf"]["counter.bytes"], \
        "the NF must see the original length of a parked packet"
    # The mode really parked something (it is not secretly baseline).
    c = res["counters"]
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0
        assert res["merged"] == res["split"]
        assert res["bytes_to_nf"] < base["bytes_to_nf"]
    else:  # nicmem, split: two segments per packet on receive
        assert c["host_boundary.rx_descriptors"] == 2 * c["host_boundary.rx_packets"]
        if mode == "nicmem":
            assert c["host_boundary.rx_kept_bytes"] > 0
            assert c["host_boundary.rx_data_bytes"] < c["host_boundary.rx_wire_bytes"]


# --- knobs that change how much is parked, never what comes out --------------------------

KNOBS: dict[str, tuple[str, tuple[str, ...], str]] = {
    # name -> (mode, flags, config text)
    "park-bytes-352": ("payloadpark", ("--park-bytes", "352"), ""),
    "park-bytes-all": ("payloadpark", ("--park-bytes", "all"), ""),
    "nfslicer-partial-tiny-ring": ("nfslicer", (), "[nfslicer]\nthr = 600\nslice_bytes = 160\n"
                                                   "entries = 64\nttl = 1\n"),
    "nicmem-pool-exhausted": ("nicmem", (), "[nicmem]\npool = 16\nheader_segment = 128\n"),
    "queuemem-small-batches": ("queuemem", (), "[queuemem]\nbatch = 3\nheader_array = 128\n"),
}


@pytest.mark.parametrize("knob", list(KNOBS))
def test_knobs_keep_output_equal(lab: Lab, knob: str) -> None:
    trace = lab.trace(3000, flows=120, seed=5, **TRACES["vlan"])
    base_out, base = lab.baseline(trace, CHAIN)
    mode, flags, text = KNOBS[knob]
    cfg = None
    if text:
        cfg = lab.root / f"knob-{knob}.toml"
        cfg.write_text(text)
    out, proc = lab.batch(trace, CHAIN, {knob: (mode, flags)}, config=cfg)[knob]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert sum(res["drops"].values()) == 0, res["drops"]
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, out)
    else:
        cli.assert_same_pcap(base_out, out)
    cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace))
    c = res["counters"]
    if knob == "park-bytes-all":
        # Header packets carry no payload at all: far less than a fifth of the bytes.
        assert res["bytes_to_nf"] < base["bytes_to_nf"] / 5
    elif knob == "nfslicer-partial-tiny-ring":
        assert res["split"] > 0
        assert c.get("unsliced_busy", 0) + c.get("unsliced_small", 0) > 0
    elif knob == "nicmem-pool-exhausted":
        assert c["host_boundary.nicmem_fallbacks"] > 0
        assert c["host_boundary.rx_kept_bytes"] > 0
    elif knob == "queuemem-small-batches":
        assert res["split"] > 0 and c["batches_complete"] > 0
