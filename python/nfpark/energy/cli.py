"""`nfpark energy` and `nfpark energy deploy`: the power model on the command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

from nfpark.energy import deploy, measurements
from nfpark.energy.model import LABELS, SystemPower, compute
from nfpark.energy.params import Params, Reading, defaults, describe, resolve, with_overrides

DESCRIPTION = """\
QUEUE-MEM's power model (NSDI'26, App. A): the power of seven NF deployments -- baseline
(whole packets to NF servers), PayloadPark, Ribosome, Tiara, nicmem, QUEUE-MEM and ASIC-only --
at a given load, in watts and in watts per Tbps of input traffic.

The default reading ('table2') reproduces the paper's Table 2 exactly; '--reading literal'
evaluates App. A as printed with the Table 1 constants. docs/energy.md lists every difference.

examples:
  nfpark energy                              # Table 2: 1 Tbps of 1500 B packets
  nfpark energy --tbps 2 --packet-size 1000  # another load
  nfpark energy --set rnic_w=20 --set nics_per_server=4 --json
  nfpark energy --plot fig3.png              # the paper's Fig. 3
  nfpark energy deploy --mpps 83.3 --per-core-mpps 9.5   # an nfpark deployment
"""

DEPLOY_DESCRIPTION = """\
Estimate the power of an nfpark deployment from a measured per-core rate (Mpps one core
sustains for your NF chain, e.g. from `nfpark run --json` or bench/ results):
  cores = ceil(mpps / per-core-mpps); servers = max(ceil(cores / cores-per-server),
  ceil(NICs / nics_per_server)); watts from the same device model as `nfpark energy`.
--payload-at says where payloads wait: 'switch' (parking switch: headers only go to the NF
servers), 'nic' (NIC memory: whole packets on the link, headers to the CPU) or 'server'
(no parking). The same load under the paper's seven systems is printed for comparison.

example:
  nfpark energy deploy --mpps 83.3 --per-core-mpps 9.5 --payload-at switch
"""


def _param_epilog() -> str:
    lines = ["parameters for --set NAME=VALUE (default of the table2 reading):"]
    base = Params()
    for name, unit, doc, source in describe():
        value = getattr(base, name)
        shown = "derived" if value is None else f"{value:g}"
        lines.append(f"  {name} = {shown} {unit}: {doc} [{source}]")
    return "\n".join(lines)


def _common(p: argparse.ArgumentParser, nested: bool) -> None:
    """Options of both `energy` and `energy deploy`; `nested` keeps the parent's values."""
    kw: dict[str, Any] = {"default": argparse.SUPPRESS} if nested else {}
    p.add_argument("--json", action="store_true", help="print JSON instead of a table", **kw)
    p.add_argument("--reading", choices=[r.value for r in Reading],
                   help="table2 (default): reproduces Table 2; literal: App. A as printed",
                   **({"default": Reading.TABLE2.value} | kw))
    p.add_argument("--packet-size", type=float, metavar="B",
                   help="mean input packet size in bytes (default 1500)", **kw)
    p.add_argument("--set", dest="assign", action="extend", nargs="+", metavar="NAME=VALUE",
                   help="override a model parameter (repeatable; list below)",
                   **({"default": []} | kw))
    p.add_argument("--data-dir", metavar="D",
                   help="directory of the measured *_watt.csv files (default: $NFPARK_POWER_DATA,"
                        " else the CSVs shipped in nfpark/energy/data, else embedded means)", **kw)


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = verbs.add_parser("energy", help="power model of NF deployments (QUEUE-MEM App. A)",
                         description=DESCRIPTION, epilog=_param_epilog(), formatter_class=fmt)
    _common(p, nested=False)
    p.add_argument("--tbps", type=float, metavar="X", help="input load in Tbps (default 1)")
    p.add_argument("--plot", metavar="OUT.png", help="also draw Fig. 3 (power vs Mpps) as PNG")
    p.set_defaults(run=run_energy)
    sub = p.add_subparsers(dest="energy_cmd", metavar="{deploy}", title="subcommands")
    d = sub.add_parser("deploy", help="power of an nfpark deployment from measured Mpps/core",
                       description=DEPLOY_DESCRIPTION, epilog=_param_epilog(),
                       formatter_class=fmt)
    _common(d, nested=True)
    d.add_argument("--mpps", type=float, required=True, help="input rate to serve, Mpps")
    d.add_argument("--per-core-mpps", type=float, required=True,
                   help="measured Mpps of one core running the NF chain")
    d.add_argument("--cores-per-server", type=int, default=16,
                   help="NF cores per server (default 16: the paper's Xeon Gold 6444Y)")
    d.add_argument("--header-bytes", type=float, default=64.0,
                   help="wire size of a header packet sent to the NF (default 64)")
    d.add_argument("--payload-at", choices=[a.value for a in deploy.PayloadAt],
                   default=deploy.PayloadAt.SWITCH.value, help="where payloads wait "
                   "(default switch)")
    d.set_defaults(run=run_deploy)


def _params(args: argparse.Namespace) -> tuple[Params, Reading, measurements.Measurements]:
    reading = Reading(args.reading)
    meas = measurements.resolve(args.data_dir)
    shortcuts = []
    if getattr(args, "tbps", None) is not None:
        shortcuts.append(f"tbps={args.tbps}")
    if args.packet_size is not None:
        shortcuts.append(f"packet_bytes={args.packet_size}")
    p = with_overrides(defaults(reading, meas), shortcuts + list(args.assign))
    return p, reading, meas


def _systems_json(results: dict[str, SystemPower]) -> dict[str, dict[str, float]]:
    return {n: {"watts": r.watts, "w_per_tbps": r.w_per_tbps} for n, r in results.items()}


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _devices(r: SystemPower) -> str:
    d = r.devices
    names = [("nf_servers", "NF server"), ("nics", "NIC"), ("rdma_servers", "RDMA server"),
             ("fpgas", "FPGA")]
    out = [f"{d['switches']} switch ({d['switch_ports']} ports)"]
    out += [_n(d[k], label) for k, label in names if d.get(k)]
    return ", ".join(out)


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i in (0, len(row) - 1) else c.rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def run_energy(args: argparse.Namespace) -> int:
    p, reading, meas = _params(args)
    results = compute(p, reading)
    if args.plot:
        from nfpark.energy import plot  # matplotlib is slow to import; only when asked

        plot.save(p, reading, args.plot)
    if args.json:
        doc = {"systems": _systems_json(results), "params": dataclasses.asdict(resolve(p)),
               "reading": reading.value}
        print(json.dumps(doc, indent=2))
        return 0
    rows = [("system", "watts", "W/Tbps", "devices")]
    rows += [(LABELS[n], f"{r.watts:.1f}", f"{r.w_per_tbps:.1f}", _devices(r))
             for n, r in results.items()]
    print(f"{p.tbps:g} Tbps of {p.packet_bytes:g} B packets, reading {reading.value}, "
          f"measurements: {meas.source}")
    print(_table(rows))
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def run_deploy(args: argparse.Namespace) -> int:
    p, reading, _ = _params(args)
    d = deploy.DeployInput(mpps=args.mpps, per_core_mpps=args.per_core_mpps,
                           cores_per_server=args.cores_per_server, header_bytes=args.header_bytes,
                           payload_at=deploy.PayloadAt(args.payload_at))
    est = deploy.estimate(p, d)
    compare = compute(dataclasses.replace(p, tbps=est.tbps), reading)
    if args.json:
        doc = {"deploy": {**dataclasses.asdict(d), **dataclasses.asdict(est),
                          "w_per_tbps": est.w_per_tbps},
               "compare": _systems_json(compare), "params": dataclasses.asdict(resolve(p)),
               "reading": reading.value}
        print(json.dumps(doc, indent=2))
        return 0
    print(f"nfpark deployment: {d.mpps:g} Mpps of {p.packet_bytes:g} B packets "
          f"({est.tbps:.3f} Tbps), payloads wait at the {d.payload_at.value}")
    print(f"  {_n(est.cores, 'core')} at {d.per_core_mpps:g} Mpps/core -> "
          f"{_n(est.servers, 'NF server')} (bound by {est.bound_by}), {_n(est.nics, 'NIC')}, "
          f"{est.switch_ports} switch ports, {est.nf_gbps:.1f} Gbps to the NF servers")
    parts = ", ".join(f"{k.removesuffix('_w')} {v:.1f}" for k, v in est.parts.items())
    print(f"  power: {est.watts:.1f} W = {est.w_per_tbps:.1f} W/Tbps  ({parts})")
    print(f"the paper's systems at the same load (reading {reading.value}):")
    rows = [("system", "watts", "W/Tbps", "devices")]
    rows += [(LABELS[n], f"{r.watts:.1f}", f"{r.w_per_tbps:.1f}", _devices(r))
             for n, r in compare.items()]
    print("\n".join("  " + line for line in _table(rows).splitlines()))
    return 0
