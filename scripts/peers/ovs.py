"""Peer `ovs`: Open vSwitch with DPDK (Debian's openvswitch-switch-dpdk, userspace datapath)
against nfpark in baseline mode, on the same vdev ports and the same frames:

    OVS `forward`   in_port=1 -> output:2                    vs nfpark chain `forward`
    OVS `firewall`  the firewall's own rules as OpenFlow     vs nfpark chain `firewall`
                    drop flows (first match = priority), default output:2
    OVS `fw+nat`    those rules, then ct(commit, nat(src=EXT)) vs nfpark chain `firewall,nat`

Port 1 = DPDK's net_pcap replaying the trace from memory (infinite_rx), port 2 = net_null, as in
peer testpmd. OVS runs as a private instance (its own ovsdb-server and ovs-vswitchd-dpdk in a
scratch directory named after this process; EAL without hugepages; one PMD thread on CPU 0).
Cost: CPU ns per packet. OVS: the PMD thread's time on a CPU (/proc/PID/task/TID/schedstat)
over the packets it received, between two samples while it forwards (start-up excluded);
nfpark: common.cost_ns (a short and a long run differenced). Alternated, N repetitions.
Rules: the firewall's default set at 1000 rules (peers_lib_bench --write-rules); a port range
becomes the prefix flows that cover it, `proto any` with ports a tcp and a udp flow. What
limits it: OVS caches each flow's decision (EMC/megaflows), so with few flows its ACL costs
almost nothing per packet after the first packet of a flow; nfpark classifies every packet.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import time
from pathlib import Path

import testpmd
from common import (
    PeerError,
    Ratio,
    Report,
    build_dir,
    cost_ns,
    gen_trace,
    have,
    thread_cpu_ns,
)

VSWITCHD = Path("/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
EXT = "198.51.100.1"
# OVS sizes each DPDK port's mempool itself, at most 262,144 mbufs (its MAX_NB_MBUF), and
# net_pcap's infinite_rx must hold the whole trace in mbufs of that pool.
OVS_MAX_MBUFS = 262_144


def port_range(lo: int, hi: int) -> list[str]:
    """value/mask pairs covering [lo, hi]."""
    out = []
    while lo <= hi:
        size = lo & -lo if lo else 1 << 16
        while size > hi - lo + 1:
            size >>= 1
        out.append(f"0x{lo:04x}/0x{(0xFFFF & ~(size - 1)):04x}")
        lo += size
    return out


def of_flows(rules_file: Path) -> list[str]:
    """The rule file as OpenFlow drop/allow flows, first rule highest priority."""
    flows = []
    lines = [x for x in rules_file.read_text().splitlines() if x]
    for i, line in enumerate(lines):
        w = line.split()
        f = dict(zip(w[1::2], w[2::2], strict=True))
        v6 = ":" in f["src"] or ":" in f["dst"]
        base = [f"priority={60000 - i}", "in_port=1"]
        for key in ("src", "dst"):
            if f[key] != "any":
                base.append(f"{'ipv6_' if v6 else 'nw_'}{key}={f[key]}")
        protos = [f["proto"]] if f["proto"] != "any" else (
            ["6", "17"] if f["sport"] != "any" or f["dport"] != "any" else [""])
        act = "drop" if w[0] == "deny" else "output:2"
        for p in protos:
            m = [("ipv6" if v6 else "ip")] + base + ([f"nw_proto={p}"] if p else [])
            ports: list[list[str]] = [[]]
            if p in ("6", "17"):
                for key, field in (("sport", "tp_src"), ("dport", "tp_dst")):
                    v = f[key]
                    if v == "any":
                        continue
                    lo, _, hi = v.partition("-")
                    vals = port_range(int(lo), int(hi or lo))
                    ports = [[*x, f"{field}={pv}"] for x in ports for pv in vals]
            elif f["sport"] != "any" or f["dport"] != "any":
                continue  # nfpark: ports are 0 for other protocols; never matches a real port
            flows += [",".join(m + x) + f",actions={act}" for x in ports]
    return flows


class Ovs:
    """A private OVS instance with DPDK; every file under `d`."""

    def __init__(self, d: Path) -> None:
        self.d = d
        d.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, OVS_RUNDIR=str(d), OVS_LOGDIR=str(d), OVS_DBDIR=str(d),
                        OVS_SYSCONFDIR=str(d))
        self.db = f"unix:{d}/db.sock"

    def sh(self, *args: str, timeout: float = 120) -> str:
        r = subprocess.run(list(args), capture_output=True, text=True, env=self.env,
                           timeout=timeout, check=False)
        if r.returncode != 0:
            raise PeerError(f"{' '.join(args[:3])}: {(r.stderr or r.stdout).strip()[-300:]}")
        return r.stdout

    def vsctl(self, *args: str) -> str:
        return self.sh("ovs-vsctl", f"--db={self.db}", "--timeout=120", *args)

    def start(self, trace: Path) -> None:
        d = self.d
        self.sh("ovsdb-tool", "create", f"{d}/conf.db", str(SCHEMA))
        self.sh("ovsdb-server", f"--remote=punix:{d}/db.sock", f"--pidfile={d}/ovsdb.pid",
                "--detach", f"--log-file={d}/ovsdb.log", f"{d}/conf.db")
        self.vsctl("--no-wait", "init")
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".", "other_config:dpdk-init=true",
                   "other_config:dpdk-extra=--no-huge --legacy-mem --no-pci -m 1024 "
                   f"--file-prefix=nfpkovs{os.getpid()} --no-telemetry",
                   "other_config:dpdk-lcore-mask=0x1", "other_config:pmd-cpu-mask=0x1")
        self.sh(str(VSWITCHD), self.db, f"--pidfile={d}/vs.pid", "--detach",
                f"--log-file={d}/vs.log")
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev")
        self.vsctl("add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dpdk",
                   f"options:dpdk-devargs=net_null_nfpk{os.getpid()},no-rx=1",
                   "ofport_request=2")
        self.trace = trace

    def attach(self) -> None:
        """Port 1 (the replayed trace) in: the PMD starts forwarding."""
        self.vsctl("add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dpdk",
                   f"options:dpdk-devargs=net_pcap_nfpk{os.getpid()},rx_pcap={self.trace},"
                   "infinite_rx=1", "ofport_request=1")

    def detach(self) -> None:
        """Port 1 out: the PMD idles (no CPU taken from nfpark's turn)."""
        self.vsctl("--if-exists", "del-port", "br0", "p1")

    def ctl(self) -> str:
        return f"{self.d}/ovs-vswitchd-dpdk.{self.pid('vs')}.ctl"

    def pid(self, name: str) -> int:
        return int((self.d / f"{name}.pid").read_text())

    def flows(self, flows: list[str]) -> None:
        self.sh("ovs-ofctl", "del-flows", f"unix:{self.d}/br0.mgmt")
        (self.d / "flows.txt").write_text("\n".join(flows) + "\n")
        self.sh("ovs-ofctl", "add-flows", f"unix:{self.d}/br0.mgmt", str(self.d / "flows.txt"),
                timeout=300)
        self.sh("ovs-appctl", "-t", self.ctl(), "dpctl/del-flows")  # no stale megaflows
        self.sh("ovs-appctl", "-t", self.ctl(), "dpctl/flush-conntrack")

    def pmd_ns(self) -> int:
        """The PMD thread's time on a CPU so far."""
        base = Path(f"/proc/{self.pid('vs')}/task")
        for t in base.iterdir():
            if (t / "comm").read_text().startswith("pmd"):
                return thread_cpu_ns(t)
        raise PeerError("no PMD thread in ovs-vswitchd")

    def received(self) -> int:
        out = self.sh("ovs-appctl", "-t", self.ctl(), "dpif-netdev/pmd-stats-show")
        m = re.search(r"core_id \d+:\s*packets received: (\d+)", out)
        if not m:
            raise PeerError(f"pmd-stats-show: {out[:200]}")
        return int(m.group(1))

    def cost_ns(self, seconds: float) -> float:
        time.sleep(0.5)  # past the new flows' first packets (upcalls)
        c0, n0 = self.pmd_ns(), self.received()
        time.sleep(seconds)
        c1, n1 = self.pmd_ns(), self.received()
        if n1 <= n0:
            raise PeerError("OVS forwarded nothing in the window")
        return (c1 - c0) / (n1 - n0)

    def stop(self) -> None:
        for name in ("vs", "ovsdb"):
            with contextlib.suppress(OSError, ValueError):
                os.kill(self.pid(name), 15)
        time.sleep(1)


def run(report: Report, scratch: Path, quick: bool) -> None:
    missing = [str(p) for p in (VSWITCHD, SCHEMA) if not p.exists()]
    missing += [t for t in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl") if not have(t)]
    if missing:
        report.skip("ovs", f"not installed: {', '.join(missing)} (openvswitch-switch-dpdk)")
        return
    if os.geteuid() != 0:
        report.skip("ovs", "needs root (ovs-vswitchd with DPDK)")
        return
    rules = scratch / "rules1000.txt"
    subprocess.run([str(build_dir() / "peers_lib_bench"), "--write-rules", "1000", str(rules)],
                   check=True, capture_output=True)
    acl = of_flows(rules)
    fwd = ["priority=0,in_port=1,actions=output:2"]
    nat = [f"priority=0,ip,in_port=1,actions=ct(commit,nat(src={EXT}:1024-65535)),output:2",
           "priority=0,ipv6,in_port=1,actions=output:2"]
    cfg = scratch / "ovs_peer.toml"
    cfg.write_text(f'[nf.firewall]\ngenerated_rules = 1000\n\n[nf.nat]\nexternal = ["{EXT}"]\n')
    cases = [("forward", "forward", fwd), ("firewall", "firewall", acl + fwd),
             ("firewall,nat", "firewall,nat", acl + nat)]
    shapes = [(1000, 1)] if quick else [(1000, 1), (1000, 8), (100_000, 1), (100_000, 8)]
    reps, window = (2, 2.0) if quick else (3, 3.0)
    short_s, long_s = (0.5, 2.5) if quick else (1.0, 5.0)
    print(f"  OVS flows: the ACL is {len(acl)} OpenFlow flows for 1000 rules", flush=True)
    for flows_n, slf in shapes:
        if flows_n * slf > OVS_MAX_MBUFS:
            report.skip("ovs", f"{flows_n} flows SLF {slf}: net_pcap replays from memory and "
                        f"needs all {flows_n * slf} frames in one mempool; OVS makes at most "
                        f"{OVS_MAX_MBUFS} mbufs per port")
            continue
        trace = gen_trace(scratch / f"ovs_{flows_n}_{slf}.pcap", max(4096, flows_n * slf),
                          flows_n, slf, 64)
        ovs = Ovs(scratch / f"ovs{flows_n}_{slf}")
        try:
            ovs.start(trace)
            for name, chain, flows in cases:
                r = Ratio()
                for _ in range(reps):
                    ovs.flows(flows)
                    ovs.attach()
                    try:
                        peer = ovs.cost_ns(window)
                    finally:
                        ovs.detach()
                    nf = cost_ns(functools.partial(testpmd.nfpark_run, trace, chain, cfg=cfg,
                                                   mbufs=max(32768, 2 * flows_n * slf)),
                                 short_s, long_s)
                    r.add(nf, peer)
                    print(f"  ovs {name} vs nfpark {chain}, {flows_n} flows SLF {slf}: "
                          f"OVS {peer:.0f} ns/pkt, nfpark {nf:.0f} ns/pkt", flush=True)
                report.ratio("ovs", f"{name} {flows_n}-flows slf{slf} 64B", r,
                             f"CPU ns/pkt: OVS {min(r.peer):.0f}, nfpark {min(r.nfpark):.0f}")
        except PeerError as e:
            report.fail("ovs", f"{flows_n} flows SLF {slf}: {e}")
        finally:
            ovs.stop()
