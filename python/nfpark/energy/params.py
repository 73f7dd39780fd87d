"""Every input of the power model, with its unit and source, and the two readings.

`Params` holds the inputs; `defaults(reading, measurements)` gives the values of a reading;
`with_overrides` applies `--set name=value`; `resolve` fills the server costs that the Table 2
reading derives from the measurements (deviations D1-D2 in docs/energy.md).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from nfpark.energy.measurements import EMBEDDED, Measurements


class Reading(StrEnum):
    """How App. A is read. TABLE2 reproduces Table 2; LITERAL is the equations as printed."""

    TABLE2 = "table2"
    LITERAL = "literal"


def _p(default: Any, unit: str, doc: str, source: str) -> Any:
    return field(default=default, metadata={"unit": unit, "doc": doc, "source": source})


@dataclass(frozen=True)
class Params:
    """Inputs of the model. Units are in the names (_w, _gbps, _bytes, _mpps) and metadata."""

    # Load and links.
    tbps: float = _p(1.0, "Tbps", "input traffic offered to the switch", "§2, App. A")
    packet_bytes: float = _p(1500.0, "B", "mean input packet size (no preamble/IFG)", "App. A")
    link_gbps: float = _p(100.0, "Gbps", "speed of every switch port and NIC", "App. A")
    # ASIC switch.
    asic_base_w: float = _p(108.0, "W", "ASIC switch idle power", "Table 1 [26]")
    asic_extra_w_per_gbps: float = _p(0.026, "W/Gbps", "ASIC power per forwarded Gbps",
                                      "Table 1 [26]")
    datasheet_packet_bytes: float = _p(
        1500.0, "B", "packet size turning per-Gbps datasheet costs (ASIC, FPGA) into per-Mpps "
        "(0.312 and 9 W/Mpps)", "§2")
    switch_ports: int = _p(32, "ports", "ports of one switch; more ports add a switch "
                           "(not in the paper; inert up to 1.3 Tbps)", "Table 1 [26]: 32x100G")
    # NF servers.
    rnic_w: float = _p(24.9, "W", "ConnectX-7 RNIC power, constant", "Table 1 [41]")
    idle_meas_w: float = _p(EMBEDDED.idle_w, "W", "measured idle server incl. 1 RNIC",
                            "idle_watt.csv mean")
    nf_full_meas_w: float = _p(EMBEDDED.nf_full_w, "W", "measured server, LB NF at link rate "
                               "of meas_full_packet_bytes packets", "nf1K_watt.csv mean")
    nf_header_meas_w: float = _p(EMBEDDED.nf_header_w, "W", "measured server, LB NF at link "
                                 "rate of meas_header_packet_bytes packets", "nf64B_watt.csv mean")
    meas_full_packet_bytes: float = _p(1500.0, "B", "packet size of the nf1K measurement", "App. A")
    meas_header_packet_bytes: float = _p(64.0, "B", "packet size of the nf64B measurement",
                                         "App. A")
    server_idle_w: float | None = _p(None, "W", "server idle power without RNIC; unset = "
                                     "idle_meas_w - rnic_w (table2) / 200 (literal)",
                                     "App. A / Table 1")
    nf_extra_full_w_per_mpps: float | None = _p(
        None, "W/Mpps", "CPU power per Mpps of whole packets; unset = (nf_full_meas_w - "
        "2*rnic_w)/Mpps (table2) / 21.07 (literal)", "eq. 1 / Table 1")
    nf_extra_header_w_per_mpps: float | None = _p(
        None, "W/Mpps", "CPU power per Mpps of headers; unset = (nf_header_meas_w - "
        "2*rnic_w)/Mpps (table2) / 1.21 (literal)", "eq. 2 / §2 text")
    nf_server_header_mpps: float = _p(178.0, "Mpps", "headers one NF server can process; sets "
                                      "n_NF of Ribosome and QUEUE-MEM (1 at 1 Tbps)", "App. A [17]")
    # Other devices and systems.
    fpga_w_per_gbps: float = _p(0.75, "W/Gbps", "FPGA power per Gbps, from zero", "Table 1 [62]")
    tiara_slow_path_share: float = _p(0.1, "fraction", "share of Tiara traffic on the CPU",
                                      "§2, eq. 15-16")
    payloadpark_parked_bytes: float = _p(160.0, "B", "payload bytes PayloadPark keeps on the "
                                         "switch", "§2, eq. 9 (1.34 KB)")
    nics_per_server: int = _p(5, "NICs", "NICs per nicmem server (80 PCIe 5.0 lanes)", "§2, eq. 12")
    rdma_server_gbps: float = _p(75.0, "Gbps", "payload rate one Ribosome RDMA server stores",
                                 "App. A [49]")


LITERAL_SERVER: dict[str, Any] = {"server_idle_w": 200.0, "nf_extra_full_w_per_mpps": 21.07,
                  "nf_extra_header_w_per_mpps": 1.21}
_INT_FIELDS = {"switch_ports", "nics_per_server"}
_FRACTION_FIELDS = {"tiara_slow_path_share"}


def names() -> list[str]:
    return [f.name for f in dataclasses.fields(Params)]


def describe() -> list[tuple[str, str, str, str]]:
    """(name, unit, doc, source) of every parameter, for --help and docs."""
    return [(f.name, f.metadata["unit"], f.metadata["doc"], f.metadata["source"])
            for f in dataclasses.fields(Params)]


def mpps_at(gbps: float, packet_bytes: float) -> float:
    """Millions of packets per second that fill `gbps` with `packet_bytes` packets."""
    return gbps * 1e3 / (packet_bytes * 8)


def defaults(reading: Reading, meas: Measurements = EMBEDDED) -> Params:
    """The parameter values of `reading`, with measured means from `meas`."""
    p = Params(idle_meas_w=meas.idle_w, nf_full_meas_w=meas.nf_full_w,
               nf_header_meas_w=meas.nf_header_w)
    if reading is Reading.LITERAL:
        p = dataclasses.replace(p, **LITERAL_SERVER)
    return p


def with_overrides(p: Params, assignments: list[str]) -> Params:
    """Apply `name=value` assignments (from --set). Raises ValueError naming the problem."""
    valid = names()
    changes: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"--set {item!r}: expected name=value, e.g. --set rnic_w=30")
        if name not in valid:
            raise ValueError(f"--set: unknown parameter {name!r}; valid: {', '.join(valid)}")
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"--set {name}: {text!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"--set {name}: {text!r} is not a finite number")
        if name in _INT_FIELDS:
            if not value.is_integer():
                raise ValueError(f"--set {name}: {text!r} must be a whole number")
            changes[name] = int(value)
        else:
            changes[name] = value
    return validate(dataclasses.replace(p, **changes))


def validate(p: Params) -> Params:
    """Reject values the model cannot use; returns `p`."""
    for f in dataclasses.fields(p):
        v = getattr(p, f.name)
        if v is None:
            continue
        if f.name in _FRACTION_FIELDS:
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{f.name} = {v}: must be between 0 and 1")
        elif f.metadata["unit"] in ("W", "W/Gbps", "W/Mpps"):
            if v < 0:
                raise ValueError(f"{f.name} = {v}: a power cannot be negative")
        elif v <= 0:
            raise ValueError(f"{f.name} = {v}: must be greater than 0")
    if p.payloadpark_parked_bytes >= p.packet_bytes:
        raise ValueError(f"payloadpark_parked_bytes = {p.payloadpark_parked_bytes}: must be less "
                         f"than packet_bytes = {p.packet_bytes}")
    return p


def resolve(p: Params) -> Params:
    """Fill unset server costs with the Table 2 derivation (docs/energy.md D1-D2).

    server_idle = idle - rnic (App. A text); NF_extra = (meas - 2*rnic)/Mpps. Eqs. 1-2 print
    (server_NF - server_idle)/Mpps; subtracting rnic twice and no idle is what gives Table 2.
    """
    idle = p.server_idle_w
    full = p.nf_extra_full_w_per_mpps
    header = p.nf_extra_header_w_per_mpps
    if idle is None:
        idle = p.idle_meas_w - p.rnic_w
    if full is None:
        full = (p.nf_full_meas_w - 2 * p.rnic_w) / mpps_at(p.link_gbps, p.meas_full_packet_bytes)
    if header is None:
        header = (p.nf_header_meas_w - 2 * p.rnic_w) / mpps_at(p.link_gbps,
                                                               p.meas_header_packet_bytes)
    return validate(dataclasses.replace(p, server_idle_w=idle, nf_extra_full_w_per_mpps=full,
                                        nf_extra_header_w_per_mpps=header))
