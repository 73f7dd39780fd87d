"""Peer `kernel`: the Linux kernel as a router (nftables firewall + masquerade) against nfpark's
`firewall,nat` on af_packet and on af_xdp, over the same veth pair, with the same source and the
same frames.

    source ns ──veth── router ns ──veth── sink ns
    peer_wire_bench      kernel: ip_forward, nft forward-chain ACL + postrouting masquerade
    (af_packet)          nfpark: run --chain firewall,nat --traffic af_packet(in)+af_packet(out)
                                 or af_xdp(in)+af_xdp(out) (DPDK's net_af_xdp: an XDP program
                                 on each veth hands every frame to nfpark's socket)
                                 (ip_forward off, no nft: the kernel drops what nfpark also sees)

The ACL is the firewall's own default rule set (N generated rules, seed 1; peers_lib_bench
--write-rules), written as nftables rules in one forward chain, first match wins, default
accept: the same rules nfpark's firewall classifies. nfpark's NAT gets the router's outside
address as its one external address, as masquerade uses it.

Measure: packets delivered to the sink per second of wall time (the sink's veth rx counter over
a window once traffic flows), the source sending as fast as its port takes frames, repeated
N times, kernel and nfpark alternated. The sink drops the frames early (the router's next hop
has a MAC no one owns; nfpark keeps the trace's MAC). What limits it: this is wall time on a
shared 2-core machine, so the load of other processes sets much of the rate (the load is
printed); the kernel forwards in the softirq of the source's transmit, on the source's CPU,
while nfpark polls on a CPU of its own (pinned to CPU 0, the source to CPU 1); af_packet costs
nfpark a copy and a system call per burst each way; af_xdp a copy into its UMEM per frame
(veth has no zero-copy mode) and a wake-up call per transmit burst. Needs root, ip, nft;
skipped otherwise (the af_xdp row alone when DPDK's net_af_xdp cannot start).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from common import PeerError, Ratio, Report, build_dir, gen_trace, have, nfpark_bin

TAG = f"{os.getpid() % 100000:05d}"
NS_S, NS_R, NS_K = f"pks{TAG}", f"pkr{TAG}", f"pkk{TAG}"
IF_S, IF_R0, IF_R1, IF_K = f"pks0{TAG}", f"pkr0{TAG}", f"pkr1{TAG}", f"pkk0{TAG}"
EXT, GW, GW_MAC = "198.51.100.1", "198.51.100.2", "02:00:00:00:00:99"
# af_packet ring frames per queue for nfpark: DPDK's default (512) overflows whenever the
# scheduler leaves nfpark off its CPU for a few ms on this shared machine (the kernel peer
# has no such ring: it forwards in the source's transmit).
RING = 16384


def sh(*args: str, stdin: str | None = None, check: bool = True) -> str:
    r = subprocess.run(list(args), capture_output=True, text=True, input=stdin, timeout=120,
                       check=False)
    if check and r.returncode != 0:
        raise PeerError(f"{' '.join(args[:6])}: {r.stderr.strip()[-300:]}")
    return r.stdout


def ns(name: str, *args: str, stdin: str | None = None, check: bool = True) -> str:
    return sh("ip", "netns", "exec", name, *args, stdin=stdin, check=check)


def teardown() -> None:
    for n in (NS_S, NS_R, NS_K):
        subprocess.run(["ip", "netns", "del", n], capture_output=True, check=False)


def setup() -> str:
    """The three namespaces, wired; returns the router's inside MAC."""
    teardown()
    for n in (NS_S, NS_R, NS_K):
        sh("ip", "netns", "add", n)
        ns(n, "ip", "link", "set", "lo", "up")
    sh("ip", "link", "add", IF_S, "netns", NS_S, "type", "veth", "peer", "name", IF_R0,
       "netns", NS_R)
    sh("ip", "link", "add", IF_R1, "netns", NS_R, "type", "veth", "peer", "name", IF_K,
       "netns", NS_K)
    for n, i, a in ((NS_S, IF_S, "10.233.0.2/24"), (NS_R, IF_R0, "10.233.0.1/24"),
                    (NS_R, IF_R1, f"{EXT}/24"), (NS_K, IF_K, f"{GW}/24")):
        ns(n, "ip", "addr", "add", a, "dev", i)
        ns(n, "ip", "link", "set", i, "up")
        if have("ethtool"):  # whole frames, no offloads, on both DUTs' links
            ns(n, "ethtool", "-K", i, "tx", "off", "rx", "off", "tso", "off", "gso", "off",
               "gro", "off", check=False)
    for key in ("net.ipv4.conf.all.rp_filter=0", f"net.ipv4.conf.{IF_R0}.rp_filter=0"):
        ns(NS_R, "sysctl", "-qw", key)
    ns(NS_R, "ip", "route", "add", "default", "via", GW)
    ns(NS_R, "ip", "neigh", "replace", GW, "lladdr", GW_MAC, "dev", IF_R1, "nud", "permanent")
    return ns(NS_R, "cat", f"/sys/class/net/{IF_R0}/address").strip()


def nft_rule(line: str) -> str:
    """One rule of acl_rule.h's syntax as an nftables rule (same match, same action)."""
    w = line.split()
    f = dict(zip(w[1::2], w[2::2], strict=True))
    parts = []
    for key, field in (("src", "saddr"), ("dst", "daddr")):
        if f[key] != "any":
            parts.append(f"{'ip6' if ':' in f[key] else 'ip'} {field} {f[key]}")
    if f["proto"] != "any":
        parts.append(f"meta l4proto {f['proto']}")
    for key in ("sport", "dport"):
        if f[key] != "any":
            parts.append(f"th {key} {f[key]}")
    return " ".join(parts) + (" drop" if w[0] == "deny" else " accept")


def kernel_on(rules_file: Path) -> None:
    body = "\n".join("  " + nft_rule(x) for x in rules_file.read_text().splitlines() if x)
    script = (
        "table inet nfpeer_fw {\n chain acl {\n  type filter hook forward priority filter; "
        f"policy accept;\n{body}\n }}\n}}\n"
        "table ip nfpeer_nat {\n chain post {\n  type nat hook postrouting priority srcnat; "
        f'policy accept;\n  oifname "{IF_R1}" masquerade\n }}\n}}\n'
    )
    ns(NS_R, "nft", "-f", "-", stdin=script)
    ns(NS_R, "sysctl", "-qw", "net.ipv4.ip_forward=1")


def kernel_off() -> None:
    ns(NS_R, "sysctl", "-qw", "net.ipv4.ip_forward=0")
    ns(NS_R, "nft", "flush", "ruleset", check=False)


def sink_count() -> int:
    return int(ns(NS_K, "cat", f"/sys/class/net/{IF_K}/statistics/rx_packets"))


def delivered_mpps(trace: Path, window_s: float) -> float:
    """Starts the source, waits until frames reach the sink, counts them over `window_s`."""
    src = subprocess.Popen(
        ["ip", "netns", "exec", NS_S, str(build_dir() / "peer_wire_bench"), "--port",
         f"vdev:net_af_packet0,iface={IF_S}", "--pcap", str(trace), "--packets", "4000000000",
         "--warm", "0", "--cpu", "1", "--timeout", str(window_s + 120)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        c0, t0 = sink_count(), time.monotonic()
        while sink_count() - c0 < 1000:
            if src.poll() is not None or time.monotonic() - t0 > 90:
                raise PeerError(f"no frames reached the sink: {src.stderr.read()[-300:]}"
                                if src.stderr else "no frames reached the sink")
            time.sleep(0.05)
        time.sleep(0.5)  # past the start
        c1, t1 = sink_count(), time.monotonic()
        time.sleep(window_s)
        c2, t2 = sink_count(), time.monotonic()
        return (c2 - c1) / (t2 - t1) / 1e6
    finally:
        src.terminate()
        try:
            src.wait(timeout=20)
        except subprocess.TimeoutExpired:
            src.kill()
            src.wait()
        # `ip netns exec` execs the source: its EAL file prefix ends in this pid.
        shutil.rmtree(f"/var/run/dpdk/peerwire{src.pid}", ignore_errors=True)


def traffic(pmd: str) -> str:
    """nfpark's two ports on the router's veths: af_packet or af_xdp."""
    if pmd == "af_xdp":
        return f"vdev:net_af_xdp0,iface={IF_R0}+vdev:net_af_xdp1,iface={IF_R1}"
    return (f"vdev:net_af_packet0,iface={IF_R0},framecnt={RING}"
            f"+vdev:net_af_packet1,iface={IF_R1},framecnt={RING}")


def nfpark_mpps(trace: Path, cfg: Path, window_s: float, pmd: str = "af_packet") -> float:
    cmd = ["ip", "netns", "exec", NS_R, "taskset", "-c", "0", str(nfpark_bin()), "run", str(cfg),
           "--mode", "baseline", "--chain", "firewall,nat", "--traffic", traffic(pmd),
           "--timeout", str(window_s + 150), "--json", "--no-progress"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        if p.poll() is not None:
            raise PeerError(f"nfpark exited (rc {p.returncode}): {p.stderr.read()[-300:]}"
                            if p.stderr else f"nfpark exited (rc {p.returncode})")
        return delivered_mpps(trace, window_s)
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def with_mac(src: Path, out: Path, mac: str) -> Path:
    """A copy of a pcap with every frame's destination MAC set (the router's, for the kernel)."""
    d = bytearray(src.read_bytes())
    m = bytes.fromhex(mac.replace(":", ""))
    i = 24
    while i + 16 <= len(d):
        n = int.from_bytes(d[i + 8:i + 12], "little")
        d[i + 16:i + 22] = m
        i += 16 + n
    out.write_bytes(bytes(d))
    return out


def run(report: Report, scratch: Path, quick: bool) -> None:
    missing = [t for t in ("ip", "nft", "taskset") if not have(t)]
    if os.geteuid() != 0 or missing:
        report.skip("kernel", f"needs root and {', '.join(missing) or 'ip, nft'}")
        return
    if not (build_dir() / "peer_wire_bench").exists():
        report.skip("kernel", "peer_wire_bench not built (NFPARK_WITH_DPDK=ON)")
        return
    rules_n = 1000
    rules = scratch / f"rules{rules_n}.txt"
    sh(str(build_dir() / "peers_lib_bench"), "--write-rules", str(rules_n), str(rules))
    cfg = scratch / "kernel_peer.toml"
    cfg.write_text(f'[nf.firewall]\ngenerated_rules = {rules_n}\n\n'
                   f'[nf.nat]\nexternal = ["{EXT}"]\n')
    reps, window = (2, 2.0) if quick else (4, 4.0)
    xdp_why: str | None = None  # why nfpark could not run on af_xdp here
    try:
        mac = setup()
        for size in [64] if quick else [64, 1500]:
            trace = with_mac(gen_trace(scratch / f"k{size}.pcap", 4096, 1000, 1, size),
                             scratch / f"k{size}_r.pcap", mac)
            r, rx = Ratio(), Ratio()
            for _ in range(reps):
                kernel_on(rules)
                k = delivered_mpps(trace, window)
                kernel_off()
                n = nfpark_mpps(trace, cfg, window)
                # Ratio of costs (1/rate): peer time per packet over nfpark's.
                r.add(1e3 / n if n > 0 else 0.0, 1e3 / k if k > 0 else 0.0)
                x = 0.0
                if xdp_why is None:
                    try:
                        x = nfpark_mpps(trace, cfg, window, "af_xdp")
                        rx.add(1e3 / x if x > 0 else 0.0, 1e3 / k if k > 0 else 0.0)
                    except PeerError as e:  # no net_af_xdp, no XDP on veth: that row only
                        xdp_why = str(e)
                print(f"  kernel nft+masquerade {k:.3f} Mpps, nfpark firewall,nat {n:.3f} Mpps "
                      f"on af_packet, {x:.3f} on af_xdp ({size} B, {rules_n} rules, 1000 flows)",
                      flush=True)
            report.ratio("kernel", f"firewall{rules_n}+nat {size}B", r,
                         f"af_packet; delivered Mpps: kernel {1e3 / min(r.peer):.3f}, "
                         f"nfpark {1e3 / min(r.nfpark):.3f}")
            if xdp_why is None:
                report.ratio("kernel", f"firewall{rules_n}+nat af_xdp {size}B", rx,
                             f"delivered Mpps: kernel {1e3 / min(rx.peer):.3f}, "
                             f"nfpark {1e3 / min(rx.nfpark):.3f}")
        if xdp_why is not None:
            report.skip("kernel", f"nfpark on af_xdp: {xdp_why}")
    finally:
        teardown()
