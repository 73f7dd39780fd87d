"""`nfpark testbed up|down|status|list`: the testbed of nfpark.testbed.net, for a user."""

from __future__ import annotations

import argparse
import json
import shlex

from nfpark.cli import CliError
from nfpark.testbed import net


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = verbs.add_parser(
        "testbed", help="network namespaces with a client, a server, nfpark and NF servers",
        description="Client and server namespaces joined through nfpark's switch (its own "
        "namespace) and NF server(s), as separate `nfpark run` processes on af_packet ports. "
        "Needs root. See docs/testbed.md.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    u = sub.add_parser("up", help="make a testbed and start nfpark in it")
    u.add_argument("--id", default="1", help="testbed id (letters/digits; default 1)")
    u.add_argument("--mode", default="baseline", choices=(*net.MODES, net.BRIDGE),
                   help="nfpark's mode, or bridge: a Linux bridge instead of nfpark")
    u.add_argument("--chain", default="firewall,counter", help="the NF servers' chain")
    u.add_argument("--nf-servers", type=int, default=1, metavar="M", help="NF servers (1)")
    u.add_argument("--nf-link", default="af_packet", choices=("af_packet", "memif"))
    u.add_argument("--switch-args", default="", help="more `nfpark run` flags for the switch")
    u.add_argument("--nf-args", default="", help="more `nfpark run` flags for the NF servers, "
                   "e.g. '--nf-drop 0.3'")
    u.set_defaults(run=_up)
    d = sub.add_parser("down", help="stop nfpark and remove everything the testbed made")
    d.add_argument("--id", default="1")
    d.add_argument("--all", action="store_true", help="every testbed on this machine")
    d.add_argument("--json", action="store_true", help="print the processes' run results")
    d.set_defaults(run=_down)
    s = sub.add_parser("status", help="what exists of a testbed")
    s.add_argument("--id", default="1")
    s.add_argument("--json", action="store_true")
    s.set_defaults(run=_status)
    ls = sub.add_parser("list", help="ids of the testbeds on this machine")
    ls.set_defaults(run=lambda a: print("\n".join(net.testbeds())) or 0)


def _up(a: argparse.Namespace) -> int:
    try:
        tb = net.up(a.id, a.mode, a.chain, a.nf_servers, a.nf_link,
                    tuple(shlex.split(a.switch_args)), tuple(shlex.split(a.nf_args)))
    except net.TestbedError as e:
        raise CliError(str(e)) from e
    print(f"testbed {tb.id} up: mode {tb.mode}, chain {tb.chain}, NF link {tb.nf_link}")
    print(f"  client {net.CLIENT_IP}: ip netns exec {tb.ns('client')} COMMAND")
    print(f"  server {net.SERVER_IP}: ip netns exec {tb.ns('server')} COMMAND")
    for p in tb.procs:
        print(f"  {p.name}: pid {p.pid} in {p.ns}, log {p.err}")
    return 0


def _down(a: argparse.Namespace) -> int:
    ids = net.testbeds() if a.all else [a.id]
    out = {}
    try:
        for tb_id in ids:
            out[tb_id] = net.down(tb_id)
    except net.TestbedError as e:
        raise CliError(str(e)) from e
    if a.json:
        print(json.dumps(out if a.all else out.get(a.id, {}), indent=2))
    else:
        for tb_id, res in out.items():
            print(f"testbed {tb_id} down")
            for name, r in res.items():
                if r:
                    print(f"  {name}: in {r.get('packets_in')} out {r.get('packets_out')} "
                          f"balanced {r.get('balanced')} pools_full {r.get('pools_full')}")
    return 0


def _status(a: argparse.Namespace) -> int:
    st = net.status(net.check_id(a.id))
    if a.json:
        print(json.dumps(st, indent=2))
        return 0
    if not st["namespaces"] and not st["state"]:
        print(f"testbed {a.id}: down")
        return 1
    print(f"testbed {a.id}: mode {st['mode']}, chain {st['chain']}, namespaces "
          f"{' '.join(st['namespaces'])}")  # type: ignore[arg-type]
    for name, p in st["processes"].items():  # type: ignore[attr-defined]
        print(f"  {name}: pid {p['pid']} {'running' if p['alive'] else 'ENDED'}  {p['last']}")
    return 0
