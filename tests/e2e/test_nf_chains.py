"""Every NF by name, and QUEUE-MEM's chains, identical on whole and header-only packets (issue 6).

Each chain runs through baseline and every parking mode (payloadpark, queuemem, nfslicer, nicmem,
split) with its defaults (or a small [nf.x] config where the defaults depend on wall-clock time);
the outputs must be byte-identical to baseline's (queuemem: the same multiset of frames).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

EXPECTED_NFS = ("router", "firewall", "nat", "lb", "ratelimit", "meter", "counter", "aes",
                "macswap", "forward", "busy")

# name -> (chain, config text or "")
CHAINS: dict[str, tuple[str, str]] = {
    **{nf: (nf, "") for nf in EXPECTED_NFS},
    # The meter's colours depend on time; with buckets that never run dry (all green) or that
    # refill by a fraction of a byte during the run (colour set by byte counts alone) the
    # outcome is deterministic, and it shows the meter sees the original length.
    "meter-green": ("meter", "[nf.meter]\ncbs = 100000000\nebs = 100000000\n"),
    "meter-per-flow": ("meter", "[nf.meter]\nper_flow = true\ncir = 1\npir = 2\ncbs = 400\n"
                                "ebs = 400\n"),
    # A rate limiter that drops: which packets are dropped is set by byte counts alone.
    "ratelimit-drops": ("counter,ratelimit", "[nf.ratelimit]\nrate_bps = 1\n"
                                             "burst_bytes = 3000\n"),
    "firewall,nat,lb": ("firewall,nat,lb", ""),
    "counter,lb,ratelimit": ("counter,lb,ratelimit", ""),
}

@cache
def registry_names(trace: Path) -> frozenset[str]:
    """NF names the binary knows, from its own error message for an unknown name."""
    p = cli.nfpark("run", "--chain", "no-such-nf", "--in", trace, "--out",
                   trace.with_suffix(".never.pcap"), "--no-progress")
    m = re.search(r"valid names: ([^)]*)\)", p.stderr)
    assert m, cli.describe(p)
    return frozenset(n.strip() for n in m.group(1).split(","))


def chain_trace(lab: Lab) -> Path:
    return lab.trace(2000, flows=100, size="dc", proto="mix", ipv6=0.2, seed=13)


def setup(lab: Lab, case: str) -> tuple[Path, str, Path | None]:
    chain, text = CHAINS[case]
    trace = chain_trace(lab)
    missing = [nf for nf in chain.split(",") if nf not in registry_names(trace)]
    if missing:
        pytest.xfail(f"NF {', '.join(missing)} missing from the registry (src/nf/registry.cc)")
    cfg = None
    if text:
        cfg = lab.root / f"chain-{case.replace(',', '_')}.toml"
        cfg.write_text(text)
    return trace, chain, cfg


MODES = ("baseline", *cli.ALL_PARK_MODES)


def outcome(lab: Lab, case: str, mode: str) -> tuple[Path, Path, cli.Json]:
    """(trace, output, JSON) of `case` in `mode`; all modes of a case run together, once."""
    trace, chain, cfg = setup(lab, case)
    out, proc = lab.modes(trace, chain, MODES, cfg)[mode]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert res["mode"] == mode
    return trace, out, res


def test_registry_has_every_nf(lab: Lab) -> None:
    names = registry_names(chain_trace(lab))
    assert set(EXPECTED_NFS) <= names, set(EXPECTED_NFS) - names


@pytest.mark.parametrize("case", list(CHAINS))
def test_baseline_chain(lab: Lab, case: str) -> None:
    trace, out, res = outcome(lab, case, "baseline")
    frames = cli.frame_bytes(out)
    assert len(frames) == res["packets_out"]
    nf_name = CHAINS[case][0].split(",")[-1]
    assert any(k.startswith(nf_name + ".") for k in res["nf"]), res["nf"]
    if case == "ratelimit-drops":
        assert res["nf_drops"] > 0.3 * res["packets_in"]
    else:
        assert res["nf_drops"] == 0, "a default chain passes generated traffic"
        assert res["packets_out"] == res["packets_in"]
    # No NF touches the L4 payload or the IPv4 id / IPv6 flow label.
    cli.assert_own_payloads(frames, cli.frame_bytes(trace))


def cases() -> list[object]:
    out: list[object] = []
    for case in CHAINS:
        for mode in cli.ALL_PARK_MODES:
            out.append(pytest.param(case, mode, id=f"{case}-{mode}"))
    return out


@pytest.mark.parametrize(("case", "mode"), cases())
def test_chain_equals_baseline(lab: Lab, case: str, mode: str) -> None:
    _, base_out, base = outcome(lab, case, "baseline")
    trace, out, res = outcome(lab, case, mode)
    assert res["nf_drops"] == base["nf_drops"]
    cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace))
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, out)
    else:
        cli.assert_same_pcap(base_out, out)
