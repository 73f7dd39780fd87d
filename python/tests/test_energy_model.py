"""The power model: Table 2, the literal reading, monotonicity and parameter overrides."""

from __future__ import annotations

import dataclasses
import math

import pytest

from nfpark.energy import Params, Reading, compute, defaults, resolve
from nfpark.energy.model import (
    LITERAL_W_PER_TBPS,
    PAPER_W_PER_TBPS,
    SYSTEMS,
    asic_w_per_mpps,
    fpga_w_per_mpps,
)
from nfpark.energy.params import validate, with_overrides

TABLE2 = compute(defaults(Reading.TABLE2), Reading.TABLE2)
LITERAL = compute(defaults(Reading.LITERAL), Reading.LITERAL)


@pytest.mark.parametrize("system", SYSTEMS)
def test_table2_within_one_percent(system: str) -> None:
    got = TABLE2[system].w_per_tbps
    assert got == pytest.approx(PAPER_W_PER_TBPS[system], rel=0.01)


@pytest.mark.parametrize("system", [s for s in SYSTEMS if s != "baseline"])
def test_table2_exact_when_truncated(system: str) -> None:
    # The paper truncates: int() of every value is exactly Table 2 (digest §2).
    assert int(TABLE2[system].w_per_tbps) == PAPER_W_PER_TBPS[system]


def test_baseline_is_5_83_kw() -> None:
    assert math.floor(TABLE2["baseline"].watts / 10) / 100 == 5.83


@pytest.mark.parametrize("system", SYSTEMS)
def test_literal_reading_matches_digest(system: str) -> None:
    assert round(LITERAL[system].w_per_tbps) == LITERAL_W_PER_TBPS[system]


def test_derived_constants() -> None:
    p = resolve(defaults(Reading.TABLE2))
    assert p.server_idle_w == pytest.approx(172.4348, abs=1e-4)
    assert p.nf_extra_full_w_per_mpps == pytest.approx(44.3831, abs=1e-4)
    assert p.nf_extra_header_w_per_mpps == pytest.approx(2.20570, abs=1e-5)
    assert asic_w_per_mpps(p) == pytest.approx(0.312)
    assert fpga_w_per_mpps(p) == pytest.approx(9.0)


def test_device_counts_at_one_tbps() -> None:
    assert TABLE2["payloadpark"].devices["nf_servers"] == 9
    assert TABLE2["ribosome"].devices["rdma_servers"] == 13
    assert LITERAL["ribosome"].devices["rdma_servers"] == 14
    assert TABLE2["nicmem"].devices["nf_servers"] == 2
    assert TABLE2["tiara"].devices["fpgas"] == 10
    assert TABLE2["queuemem"].devices["nf_servers"] == 1


def test_parts_sum_to_watts() -> None:
    for r in TABLE2.values():
        assert sum(r.parts.values()) == pytest.approx(r.watts)


@pytest.mark.parametrize("reading", list(Reading))
def test_power_non_decreasing_in_load(reading: Reading) -> None:
    p = defaults(reading)
    loads = [0.01 * k for k in range(1, 301)]  # 10 Gbps .. 3 Tbps
    prev = {s: 0.0 for s in SYSTEMS}
    for tbps in loads:
        res = compute(dataclasses.replace(p, tbps=tbps), reading)
        for s in SYSTEMS:
            assert res[s].watts >= prev[s] - 1e-9, (s, tbps)
            prev[s] = res[s].watts


def test_power_non_decreasing_in_mpps_at_other_packet_size() -> None:
    p = defaults(Reading.TABLE2)
    prev = {s: 0.0 for s in SYSTEMS}
    for k in range(1, 101):
        q = with_overrides(p, ["packet_bytes=512", f"tbps={0.02 * k}"])
        res = compute(q, Reading.TABLE2)
        for s in SYSTEMS:
            assert res[s].watts >= prev[s] - 1e-9, (s, k)
            prev[s] = res[s].watts


def _changed(assignment: str, reading: Reading = Reading.TABLE2) -> set[str]:
    base = compute(defaults(reading), reading)
    new = compute(with_overrides(defaults(reading), [assignment]), reading)
    return {s for s in SYSTEMS if not math.isclose(base[s].watts, new[s].watts, rel_tol=1e-12)}


@pytest.mark.parametrize(("assignment", "expected"), [
    ("fpga_w_per_gbps=1.0", {"tiara"}),
    ("tiara_slow_path_share=0.2", {"tiara"}),
    ("rdma_server_gbps=100", {"ribosome"}),
    ("payloadpark_parked_bytes=352", {"payloadpark"}),
    ("nics_per_server=2", {"nicmem"}),
    ("nf_extra_header_w_per_mpps=3", {"ribosome", "nicmem", "queuemem"}),
    ("nf_header_meas_w=500", {"ribosome", "nicmem", "queuemem"}),
    ("nf_extra_full_w_per_mpps=50", {"baseline", "payloadpark", "tiara"}),
    ("nf_full_meas_w=450", {"baseline", "payloadpark", "tiara"}),
    ("server_idle_w=150", set(SYSTEMS) - {"asic"}),
    ("rnic_w=20", set(SYSTEMS) - {"asic"}),
    ("asic_base_w=200", set(SYSTEMS)),
    ("asic_extra_w_per_gbps=0.05", set(SYSTEMS)),
    ("nf_server_header_mpps=50", {"ribosome", "queuemem"}),
])
def test_override_changes_the_right_systems(assignment: str, expected: set[str]) -> None:
    assert _changed(assignment) == expected


def test_literal_reading_ignores_measurements_but_honours_rnic() -> None:
    assert _changed("nf_full_meas_w=450", Reading.LITERAL) == set()
    assert _changed("rnic_w=20", Reading.LITERAL) == set(SYSTEMS) - {"asic"}


def test_override_direction() -> None:
    cheap = compute(with_overrides(defaults(Reading.TABLE2), ["rnic_w=10"]), Reading.TABLE2)
    # A cheaper RNIC raises server_idle (= idle - rnic) and NF_extra (meas - 2 rnic) ...
    assert cheap["queuemem"].watts > TABLE2["queuemem"].watts
    # ... which is the Table 2 reading's odd term (D2); with fixed server costs it saves power.
    p = resolve(defaults(Reading.TABLE2))
    fixed = compute(dataclasses.replace(p, rnic_w=10), Reading.TABLE2)
    assert fixed["queuemem"].watts < TABLE2["queuemem"].watts


def test_more_switches_beyond_32_ports() -> None:
    res = compute(with_overrides(defaults(Reading.TABLE2), ["tbps=2"]), Reading.TABLE2)
    assert res["baseline"].devices["switches"] == 2  # 40 ports
    assert res["queuemem"].devices["switches"] == 1  # 22 ports
    assert res["queuemem"].devices["nf_servers"] == 1  # 167 Mpps <= 178


@pytest.mark.parametrize(("assignment", "message"), [
    ("nosuch=1", "unknown parameter 'nosuch'"),
    ("rnic_w=abc", "'abc' is not a number"),
    ("rnic_w", "expected name=value"),
    ("tbps=0", "must be greater than 0"),
    ("tiara_slow_path_share=1.5", "between 0 and 1"),
    ("nics_per_server=2.5", "whole number"),
    ("payloadpark_parked_bytes=1500", "less than packet_bytes"),
    ("rnic_w=nan", "finite"),
])
def test_bad_overrides(assignment: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        with_overrides(defaults(Reading.TABLE2), [assignment])


def test_unknown_parameter_lists_valid_names() -> None:
    with pytest.raises(ValueError) as err:
        with_overrides(Params(), ["nosuch=1"])
    for name in ("rnic_w", "tbps", "nics_per_server", "rdma_server_gbps"):
        assert name in str(err.value)


def test_validate_accepts_defaults() -> None:
    for r in Reading:
        validate(defaults(r))
