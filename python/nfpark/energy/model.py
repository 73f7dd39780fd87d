"""QUEUE-MEM App. A power model: watts of seven NF deployments at a given load.

Equation numbers refer to App. A of seeds/004 (QUEUE-MEM, NSDI'26). Where the Table 2 reading
differs from the printed equations the code says `D<n>`, as listed in docs/energy.md.
Generalisations beyond the paper's operating point (1 Tbps of 1500 B packets) are marked `G<n>`;
none of them changes a number at that point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nfpark.energy.params import Params, Reading, mpps_at, resolve

SYSTEMS: tuple[str, ...] = ("baseline", "payloadpark", "ribosome", "tiara", "nicmem",
                            "queuemem", "asic")
LABELS: dict[str, str] = {"baseline": "Baseline", "payloadpark": "PayloadPark",
                          "ribosome": "Ribosome", "tiara": "Tiara", "nicmem": "nicmem",
                          "queuemem": "QUEUE-MEM", "asic": "ASIC-only"}
# Table 2 (W/Tbps) and, for the baseline, the §2 text (5.83 kW at 1 Tbps).
PAPER_W_PER_TBPS: dict[str, float] = {"baseline": 5830, "payloadpark": 5662, "ribosome": 1996,
                                      "tiara": 1402, "nicmem": 937, "queuemem": 517, "asic": 134}
# What the literal reading gives (shared/research/queuemem_power.md §1).
LITERAL_W_PER_TBPS: dict[str, float] = {"baseline": 4165, "payloadpark": 3950,
                                        "ribosome": 2247, "tiara": 1075, "nicmem": 889,
                                        "queuemem": 462, "asic": 134}


@dataclass(frozen=True)
class SystemPower:
    """Power of one deployment. `parts` splits `watts` by device; `devices` counts them."""

    watts: float
    tbps: float
    parts: dict[str, float] = field(default_factory=dict)
    devices: dict[str, int] = field(default_factory=dict)

    @property
    def w_per_tbps(self) -> float:
        return self.watts / self.tbps


@dataclass(frozen=True)
class Load:
    """The offered load on the input ports (App. A: uniform over the ports)."""

    total_gbps: float
    total_mpps: float
    in_ports: int  # G1: ceil(Tbps / link speed); 10 at 1 Tbps
    port_mpps: float  # G1: in_tput, one input port's load; ports fill one at a time


def ceil_count(x: float) -> int:
    """ceil() that ignores floating-point dust (8.3333/8.3333 must be 1, not 2)."""
    return max(0, math.ceil(x - 1e-9))


def load_of(p: Params) -> Load:
    gbps = p.tbps * 1e3
    mpps = mpps_at(gbps, p.packet_bytes)
    ports = max(1, ceil_count(gbps / p.link_gbps))
    port = min(mpps, mpps_at(p.link_gbps, p.packet_bytes))
    return Load(total_gbps=gbps, total_mpps=mpps, in_ports=ports, port_mpps=port)


def asic_w_per_mpps(p: Params) -> float:
    """0.026 W/Gbps at 1.5 KB packets = 0.312 W/Mpps (§2)."""
    return p.asic_extra_w_per_gbps * p.datasheet_packet_bytes * 8 / 1e3


def fpga_w_per_mpps(p: Params) -> float:
    """0.75 W/Gbps at 1.5 KB packets = 9 W/Mpps (§2)."""
    return p.fpga_w_per_gbps * p.datasheet_packet_bytes * 8 / 1e3


def switch_w(p: Params, traffic_mpps: float, ports: int) -> tuple[float, dict[str, int]]:
    """Eq. 4: base + extra * Mpps over the counted ports. G2: one more switch per switch_ports."""
    switches = max(1, ceil_count(ports / p.switch_ports))
    watts = switches * p.asic_base_w + asic_w_per_mpps(p) * traffic_mpps
    return watts, {"switches": switches, "switch_ports": ports}


def ports_w(p: Params, ld: Load, extra_ports: int) -> tuple[float, dict[str, int]]:
    """Eqs. 4/20/24: extra * in_tput * (in_ports + extra_ports). G1: the input ports carry the
    total load and every extra port one input port's load (the same at whole-port loads)."""
    return switch_w(p, ld.total_mpps + extra_ports * ld.port_mpps, ld.in_ports + extra_ports)


def servers_w(p: Params, n: int, cpu_mpps: float, w_per_mpps: float | None, nics: int) -> float:
    """Eqs. 6/10/13/16/21 summed over n servers: idle + NF_extra * Mpps + rnic per NIC."""
    assert p.server_idle_w is not None and w_per_mpps is not None  # resolve() fills them
    return n * p.server_idle_w + w_per_mpps * cpu_mpps + nics * p.rnic_w


def _result(p: Params, sw: tuple[float, dict[str, int]], parts: dict[str, float],
            devices: dict[str, int]) -> SystemPower:
    all_parts = {"switch_w": sw[0], **parts}
    return SystemPower(watts=sum(all_parts.values()), tbps=p.tbps, parts=all_parts,
                       devices={**sw[1], **devices})


def asic(p: Params, r: Reading, ld: Load) -> SystemPower:
    """ASIC-only: the switch alone forwards the input traffic."""
    return _result(p, ports_w(p, ld, 0), {}, {})


def baseline(p: Params, r: Reading, ld: Load) -> SystemPower:
    """Eqs. 3-7: one NF server per input port, whole packets."""
    n = ld.in_ports  # eq. 7
    srv = servers_w(p, n, ld.total_mpps, p.nf_extra_full_w_per_mpps, n)  # eq. 6
    return _result(p, ports_w(p, ld, n), {"nf_servers_w": srv}, {"nf_servers": n, "nics": n})


def payloadpark(p: Params, r: Reading, ld: Load) -> SystemPower:
    """Eqs. 8-10: 160 B parked on the switch; each server runs full at Mpps of 1.34 KB."""
    per_server = mpps_at(p.link_gbps, p.packet_bytes - p.payloadpark_parked_bytes)
    n = max(1, ceil_count(ld.total_mpps / per_server))  # eq. 9: 9 at 1 Tbps (the text says 10)
    extra = ld.in_ports if r is Reading.TABLE2 else n  # D3 vs eq. 5
    srv = servers_w(p, n, n * per_server, p.nf_extra_full_w_per_mpps, n)  # eq. 10
    return _result(p, ports_w(p, ld, extra), {"nf_servers_w": srv}, {"nf_servers": n, "nics": n})


def nicmem(p: Params, r: Reading, ld: Load) -> SystemPower:
    """Eqs. 11-13: payloads in NIC memory, headers to the CPU, nics_per_server NICs a server."""
    n = max(1, ceil_count(ld.in_ports / p.nics_per_server))  # eq. 12
    extra = ld.in_ports if r is Reading.TABLE2 else n  # D3 vs eq. 5
    # G3: one NIC per input port, spread over the n servers (eq. 13 when n_nic divides in_ports).
    srv = servers_w(p, n, ld.total_mpps, p.nf_extra_header_w_per_mpps, ld.in_ports)
    return _result(p, ports_w(p, ld, extra), {"nf_servers_w": srv},
                   {"nf_servers": n, "nics": ld.in_ports})


def tiara(p: Params, r: Reading, ld: Load) -> SystemPower:
    """Eqs. 14-16: one FPGA per input port (fast path), CPU server(s) for the slow path."""
    share = p.tiara_slow_path_share
    n_fpga = ld.in_ports
    fast = (1 - share) * ld.total_mpps  # n_FPGA * in_tput^90%
    if r is Reading.TABLE2:  # D4: the slow path is 10% of the total load
        slow = share * ld.total_mpps
        # G4: one more server per link's worth of slow-path packets (1 at 1 Tbps).
        n_srv = max(1, ceil_count(slow / mpps_at(p.link_gbps, p.packet_bytes)))
    else:  # eqs. 15-16 as printed: in_tput^10% is 10% of one port's load
        n_srv = 1
        slow = share * ld.port_mpps
    traffic = ld.total_mpps + fast + slow  # eq. 15
    srv = servers_w(p, n_srv, slow, p.nf_extra_full_w_per_mpps, n_srv)  # eq. 16
    fpga = fpga_w_per_mpps(p) * fast  # Table 1: 9 W/Mpps per FPGA, from zero
    return _result(p, switch_w(p, traffic, ld.in_ports + n_fpga + n_srv),
                   {"nf_servers_w": srv, "fpgas_w": fpga},
                   {"nf_servers": n_srv, "nics": n_srv, "fpgas": n_fpga})


def header_servers(p: Params, ld: Load) -> int:
    """G5: NF servers for a header-only load; the paper fixes n_NF = 1 (1 up to 2.1 Tbps)."""
    return max(1, ceil_count(ld.total_mpps / p.nf_server_header_mpps))


def ribosome(p: Params, r: Reading, ld: Load) -> SystemPower:
    """Eqs. 17-22: headers to one NF server, payloads to RDMA servers."""
    n_nf = header_servers(p, ld)
    if r is Reading.TABLE2:  # D5: round(Gbps / 75) = 13, as the released code does
        n_rdma = max(1, math.floor(ld.total_gbps / p.rdma_server_gbps + 0.5))
    else:  # eqs. 18-19: ceil(Mpps * 1500 * 8 / 1024 / 75) = 14
        n_rdma = max(1, ceil_count(ld.total_mpps * p.packet_bytes * 8 / 1024
                                   / p.rdma_server_gbps))
    srv = servers_w(p, n_nf, ld.total_mpps, p.nf_extra_header_w_per_mpps, n_nf)  # eq. 21
    assert p.server_idle_w is not None
    rdma = n_rdma * (p.server_idle_w / 2 + p.rnic_w)  # eq. 22
    return _result(p, ports_w(p, ld, n_rdma + n_nf),  # eq. 20
                   {"nf_servers_w": srv, "rdma_servers_w": rdma},
                   {"nf_servers": n_nf, "nics": n_nf + n_rdma, "rdma_servers": n_rdma})


def queuemem(p: Params, r: Reading, ld: Load) -> SystemPower:
    """Eqs. 23-24: payloads wait in the switch queues; headers to one NF server."""
    n_nf = header_servers(p, ld)
    srv = servers_w(p, n_nf, ld.total_mpps, p.nf_extra_header_w_per_mpps, n_nf)  # eq. 21
    return _result(p, ports_w(p, ld, n_nf), {"nf_servers_w": srv},  # eq. 24
                   {"nf_servers": n_nf, "nics": n_nf})


_MODELS = {"baseline": baseline, "payloadpark": payloadpark, "ribosome": ribosome,
           "tiara": tiara, "nicmem": nicmem, "queuemem": queuemem, "asic": asic}


def compute(p: Params, reading: Reading) -> dict[str, SystemPower]:
    """Power of every system in SYSTEMS order. Unset server costs are derived first."""
    rp = resolve(p)
    ld = load_of(rp)
    return {name: _MODELS[name](rp, reading, ld) for name in SYSTEMS}
