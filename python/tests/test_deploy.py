"""The nfpark deployment estimate (beyond the paper)."""

from __future__ import annotations

import pytest

from nfpark.energy import Reading, compute, defaults, resolve
from nfpark.energy.deploy import DeployInput, PayloadAt, estimate
from nfpark.energy.params import with_overrides

P = defaults(Reading.TABLE2)


def test_sizing_by_cores() -> None:
    est = estimate(P, DeployInput(mpps=100, per_core_mpps=3, cores_per_server=16))
    assert est.cores == 34 and est.servers == 3 and est.bound_by == "cores"
    assert est.nics == 3  # every server has a NIC, even if one would carry the headers


def test_sizing_by_nics_for_whole_packets() -> None:
    est = estimate(P, DeployInput(mpps=83.3333333, per_core_mpps=100, payload_at=PayloadAt.NIC))
    assert est.cores == 1
    assert est.nics == 10 and est.servers == 2 and est.bound_by == "nics"  # like nicmem


def test_watts_from_the_device_model() -> None:
    rp = resolve(P)
    est = estimate(P, DeployInput(mpps=50, per_core_mpps=10))
    assert rp.server_idle_w is not None and rp.nf_extra_header_w_per_mpps is not None
    assert est.parts["server_idle_w"] == pytest.approx(est.servers * rp.server_idle_w)
    assert est.parts["cpu_w"] == pytest.approx(50 * rp.nf_extra_header_w_per_mpps)
    assert est.parts["rnics_w"] == pytest.approx(est.nics * rp.rnic_w)
    assert est.watts == pytest.approx(sum(est.parts.values()))
    assert est.w_per_tbps == pytest.approx(est.watts / est.tbps)


def test_parking_is_cheapest_and_close_to_queuemem() -> None:
    d = {a: estimate(P, DeployInput(mpps=83.3333333, per_core_mpps=10, payload_at=a))
         for a in PayloadAt}
    assert d[PayloadAt.SWITCH].watts < d[PayloadAt.NIC].watts < d[PayloadAt.SERVER].watts
    qm = compute(P, Reading.TABLE2)["queuemem"].watts
    assert d[PayloadAt.SWITCH].watts == pytest.approx(qm, rel=0.1)


def test_slower_cores_cost_more() -> None:
    prev = 0.0
    for per_core in (20.0, 10.0, 5.0, 2.0, 1.0, 0.5):
        w = estimate(P, DeployInput(mpps=80, per_core_mpps=per_core)).watts
        assert w >= prev
        prev = w


def test_overrides_apply() -> None:
    q = with_overrides(P, ["packet_bytes=500"])
    est = estimate(q, DeployInput(mpps=100, per_core_mpps=10))
    assert est.tbps == pytest.approx(0.4)


@pytest.mark.parametrize("field", ["mpps", "per_core_mpps", "cores_per_server", "header_bytes"])
def test_rejects_non_positive(field: str) -> None:
    kwargs = {"mpps": 10.0, "per_core_mpps": 1.0, field: 0}
    with pytest.raises(ValueError, match=field):
        estimate(P, DeployInput(**kwargs))  # type: ignore[arg-type]


def test_nic_memory_deployment_with_two_servers_is_nicmem() -> None:
    # 2 servers x 5 NICs, headers to the CPU: the same devices as the paper's nicmem at 1 Tbps.
    est = estimate(P, DeployInput(mpps=83.3333333, per_core_mpps=4, payload_at=PayloadAt.NIC))
    assert (est.servers, est.nics) == (2, 10)
    assert est.watts == pytest.approx(compute(P, Reading.TABLE2)["nicmem"].watts, rel=1e-6)
