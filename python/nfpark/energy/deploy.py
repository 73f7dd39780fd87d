"""Beyond the paper: the power of an nfpark deployment sized from measured per-core rates.

The paper's model fixes how many NF servers each system needs. For nfpark the number comes from
a measurement instead: `nfpark run --json` / bench give Mpps per core for an NF chain, so

    cores   = ceil(Mpps / per-core Mpps)
    servers = max(ceil(cores / cores_per_server), ceil(NICs / nics_per_server))
    NICs    = max(ceil(Gbps sent to the NF servers / link_gbps), servers)

and the watts come from the same device model as `compute` (switch, server idle, CPU W/Mpps,
RNICs). Where the payload waits decides what the NF servers receive and their CPU cost per Mpps.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from nfpark.energy.model import ceil_count, switch_w
from nfpark.energy.params import Params, resolve


class PayloadAt(StrEnum):
    """Where the payload waits while the NF runs (DESIGN.md §1)."""

    SERVER = "server"  # no parking: whole packets to the NF server (the paper's baseline)
    NIC = "nic"  # NIC memory (nicmem, NFSlicer): whole packets on the link, headers to the CPU
    SWITCH = "switch"  # parking switch (QUEUE-MEM, PayloadPark): headers only on the link


@dataclass(frozen=True)
class DeployInput:
    mpps: float  # input packet rate to serve, Mpps
    per_core_mpps: float  # measured NF-chain rate of one core, Mpps
    cores_per_server: int = 16  # Xeon Gold 6444Y, the paper's measured server
    header_bytes: float = 64.0  # wire size of a header-only packet sent to the NF, B
    payload_at: PayloadAt = PayloadAt.SWITCH

    def validate(self) -> DeployInput:
        for name in ("mpps", "per_core_mpps", "cores_per_server", "header_bytes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} = {getattr(self, name)}: must be greater than 0")
        return self


@dataclass(frozen=True)
class DeployEstimate:
    tbps: float  # input traffic at the given Mpps and packet_bytes
    nf_gbps: float  # traffic on the links to the NF servers
    cores: int
    servers: int
    nics: int
    switch_ports: int
    bound_by: str  # "cores" or "nics": what set the server count
    parts: dict[str, float]  # watts by device
    watts: float

    @property
    def w_per_tbps(self) -> float:
        return self.watts / self.tbps


def estimate(p: Params, d: DeployInput) -> DeployEstimate:
    """Size and price an nfpark deployment (see module doc). `p` gives packet size and devices."""
    d.validate()
    rp = resolve(p)
    assert rp.server_idle_w is not None
    tbps = d.mpps * rp.packet_bytes * 8 / 1e6
    in_ports = max(1, ceil_count(tbps * 1e3 / rp.link_gbps))
    nf_bytes = d.header_bytes if d.payload_at is PayloadAt.SWITCH else rp.packet_bytes
    nf_gbps = d.mpps * nf_bytes * 8 / 1e3
    cores = max(1, ceil_count(d.mpps / d.per_core_mpps))
    by_cores = ceil_count(cores / d.cores_per_server)
    nics_needed = max(1, ceil_count(nf_gbps / rp.link_gbps))
    by_nics = ceil_count(nics_needed / rp.nics_per_server)
    servers = max(1, by_cores, by_nics)
    nics = max(nics_needed, servers)
    per_mpps = (rp.nf_extra_full_w_per_mpps if d.payload_at is PayloadAt.SERVER
                else rp.nf_extra_header_w_per_mpps)
    assert per_mpps is not None
    ports = in_ports + nics
    sw, _ = switch_w(rp, 2 * d.mpps, ports)  # every packet crosses the switch in and to the NF
    parts = {"switch_w": sw, "server_idle_w": servers * rp.server_idle_w,
             "cpu_w": per_mpps * d.mpps, "rnics_w": nics * rp.rnic_w}
    return DeployEstimate(tbps=tbps, nf_gbps=nf_gbps, cores=cores, servers=servers, nics=nics,
                          switch_ports=ports, bound_by="cores" if by_cores >= by_nics else "nics",
                          parts=parts, watts=sum(parts.values()))
