"""nfpark's NAT against the Linux kernel's (nftables masquerade), on the same trace.

    inside ns ──veth── router ns (ip_forward, nft masquerade) ──veth── outside ns (capture)
    tcpreplay TRACE                                                     dumpcap

The trace (built here: nat_frames.py) is replayed from the inside namespace through the router
and captured outside; `nfpark run --chain nat` runs on the same trace with the router's outside
address as its one external address. For each packet of the trace the test states what each NAT
does — translated, passed untranslated or dropped — and checks the structure of the rewrite
(source address, a consistent port or ICMP identifier per flow, an ICMP error's quote), not the
port values, which each NAT chooses its own way. docs/nfs.md (NAT) explains every difference.
Needs root, ip, nft, tcpreplay and dumpcap; skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import nat_frames as F
from . import nfpark_cli as cli

_TAG = f"{os.getpid() % 100000:05d}"
NS_IN, NS_R, NS_OUT = f"nki{_TAG}", f"nkr{_TAG}", f"nko{_TAG}"
IF_IN, IF_R_IN, IF_R_OUT, IF_OUT = f"nki0{_TAG}", f"nki1{_TAG}", f"nko1{_TAG}", f"nko0{_TAG}"
EXT, GW = "198.51.100.1", "198.51.100.2"

TOOLS = ("ip", "nft", "tcpreplay", "dumpcap")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in TOOLS),
    reason=f"needs root and {', '.join(TOOLS)} (scripts/setup.sh installs them)",
)


def sh(*args: str, check: bool = True, stdin: str | None = None
       ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=30,
                          input=stdin)


def ns(name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return sh("ip", "netns", "exec", name, *args, check=check)


def teardown() -> None:
    for n in (NS_IN, NS_R, NS_OUT):
        sh("ip", "netns", "del", n, check=False)


@pytest.fixture()
def router() -> Iterator[bytes]:
    """The three namespaces, wired and configured; yields the router's inside MAC."""
    teardown()
    try:
        for n in (NS_IN, NS_R, NS_OUT):
            sh("ip", "netns", "add", n)
            ns(n, "ip", "link", "set", "lo", "up")
            # No duplicate address detection: a tentative link-local address delays ND.
            ns(n, "sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0")
        sh("ip", "link", "add", IF_IN, "netns", NS_IN, "type", "veth", "peer", "name", IF_R_IN,
           "netns", NS_R)
        sh("ip", "link", "add", IF_R_OUT, "netns", NS_R, "type", "veth", "peer", "name", IF_OUT,
           "netns", NS_OUT)
        for n, i, a4, a6 in ((NS_IN, IF_IN, "10.231.0.2/24", "fd31::2/64"),
                             (NS_R, IF_R_IN, "10.231.0.1/24", "fd31::1/64"),
                             (NS_R, IF_R_OUT, f"{EXT}/24", "2001:db8:31::1/64"),
                             (NS_OUT, IF_OUT, f"{GW}/24", "2001:db8:31::2/64")):
            ns(n, "ip", "addr", "add", a4, "dev", i)
            ns(n, "ip", "-6", "addr", "add", a6, "dev", i, "nodad")
            ns(n, "ip", "link", "set", i, "up")
            if shutil.which("ethtool"):  # whole, checksummed frames on the wire
                ns(n, "ethtool", "-K", i, "tx", "off", "rx", "off", "tso", "off", "gso", "off",
                   "gro", "off", check=False)
        for key in ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
                    "net.ipv4.conf.all.rp_filter=0", f"net.ipv4.conf.{IF_R_IN}.rp_filter=0"):
            ns(NS_R, "sysctl", "-qw", key)
        ns(NS_R, "ip", "route", "add", "default", "via", GW)
        ns(NS_R, "ip", "-6", "route", "add", "default", "via", "2001:db8:31::2")
        rules = ("table ip nfpark_nat {\n chain post {\n"
                 "  type nat hook postrouting priority srcnat; policy accept;\n"
                 f'  oifname "{IF_R_OUT}" masquerade\n }}\n}}\n')
        sh("ip", "netns", "exec", NS_R, "nft", "-f", "-", stdin=rules)
        mac = ns(NS_R, "cat", f"/sys/class/net/{IF_R_IN}/address").stdout.strip()
        yield bytes.fromhex(mac.replace(":", ""))
    finally:
        teardown()


# ---------------------------------------------------------------------------------------------
# the trace: every packet has its own IPv4 identification, so outputs map back to it


@dataclass
class Trace:
    frames: list[bytes]
    ids: dict[str, list[int]]  # what -> IPv4 identifications of its packets


def build_trace() -> Trace:
    frames: list[bytes] = []
    ids: dict[str, list[int]] = {}
    n = [300]

    def add(what: str, ip: bytes) -> None:
        frames.append(F.eth(ip))
        ids.setdefault(what, []).append(F.parse_ip4(ip).ident)

    def nid() -> int:
        n[0] += 1
        return n[0]

    def udp(src: str, dst: str, sp: int, dp: int, size: int = 200, ttl: int = 64) -> bytes:
        return F.ipv4(src, dst, F.UDP, F.udp(src, dst, sp, dp, bytes(size)), nid(), ttl)

    add("tcp", F.ipv4("10.0.0.5", "93.184.216.34", F.TCP,
                      F.tcp("10.0.0.5", "93.184.216.34", 40000, 80, 0x02), nid()))
    # Data after a SYN that no SYN-ACK answered: conntrack's TCP tracking calls it INVALID.
    add("tcp_data_unanswered", F.ipv4("10.0.0.5", "93.184.216.34", F.TCP,
                                      F.tcp("10.0.0.5", "93.184.216.34", 40000, 80, 0x18,
                                            bytes(500), 1001), nid()))
    add("udp_a", udp("10.0.0.5", "8.8.8.8", 5555, 53))
    add("udp_a", udp("10.0.0.5", "8.8.8.8", 5555, 53))
    add("udp_b", udp("10.0.0.6", "8.8.8.8", 5555, 53))  # same port, another inside host
    add("echo", F.ipv4("10.0.0.6", "9.9.9.9", F.ICMP, F.echo(0x4242, 1, bytes(56)), nid()))
    add("echo", F.ipv4("10.0.0.6", "9.9.9.9", F.ICMP, F.echo(0x4242, 2, bytes(56)), nid()))
    # 10.0.0.5 answers a reply of flow udp_a with port unreachable (quoting it as delivered).
    delivered = udp("8.8.8.8", "10.0.0.5", 53, 5555)
    add("error_matched", F.ipv4("10.0.0.5", "8.8.8.8", F.ICMP,
                                F.icmp(3, 3, b"\0" * 4, delivered[:48]), nid()))
    stray = udp("1.2.3.4", "10.0.0.5", 53, 4444)
    add("error_stray", F.ipv4("10.0.0.5", "1.2.3.4", F.ICMP,
                              F.icmp(3, 3, b"\0" * 4, stray[:48]), nid()))
    frag = udp("10.0.0.7", "203.0.113.9", 7000, 9000, 3000)
    for p in F.fragments(frag, 1480):
        add("frag_in_order", p)
    late = udp("10.0.0.7", "203.0.113.9", 7000, 9000, 3000)
    pieces = F.fragments(late, 1480)
    for p in pieces[1:]:
        add("frag_late", p)
    for _ in range(40):  # more than a burst between them
        add("udp_a", udp("10.0.0.5", "8.8.8.8", 5555, 53))
    add("frag_late", pieces[0])
    add("gre", F.ipv4("10.0.0.5", "8.8.8.8", F.GRE, b"\0\0\x08\0" + bytes(100), nid()))
    add("esp", F.ipv4("10.0.0.5", "8.8.8.8", F.ESP, bytes(100), nid()))
    add("ttl1", udp("10.0.0.5", "8.8.8.8", 6000, 53, ttl=1))
    bad = bytearray(F.ipv4("10.0.0.5", "93.184.216.34", F.TCP,
                           F.tcp("10.0.0.5", "93.184.216.34", 40001, 80, 0x02), nid()))
    bad[20 + 16] ^= 0xFF  # TCP checksum wrong
    add("tcp_bad_checksum", bytes(bad))
    frames.append(F.ipv6_udp("fd00::1", "2001:db8::1", 1, 2, bytes(100), 7))
    return Trace(frames, ids)


# ---------------------------------------------------------------------------------------------
# what each NAT made of it


def datagrams(path: Path) -> dict[int, bytes]:
    """IPv4 ident -> the datagram as it left (fragments reassembled), from a capture."""
    pieces: dict[int, list[bytes]] = {}
    for f in cli.frame_bytes(path):
        ip = F.ip_of(f)
        if ip is not None:
            pieces.setdefault(F.parse_ip4(ip).ident, []).append(ip)
    return {i: (F.reassemble(p) if len(p) > 1 or F.parse_ip4(p[0]).frag & 0x3FFF else p[0])
            for i, p in pieces.items()}


def ipv6_count(path: Path) -> int:
    return sum(1 for f in cli.frame_bytes(path) if f[12:14] == b"\x86\xdd" and f[20] == F.UDP)


@dataclass
class Seen:
    """One NAT's output, and the questions the comparison asks of it."""

    out: dict[int, bytes]
    v6: int

    def fate(self, ids: list[int]) -> str:
        """'translated' (every packet left from EXT), 'untouched' (every packet left with its
        source), 'dropped' (none left), or 'mixed: ...'."""
        srcs = [F.parse_ip4(self.out[i]).src if i in self.out else None for i in ids]
        if all(s == EXT for s in srcs):
            return "translated"
        if all(s is None for s in srcs):
            return "dropped"
        if all(s is not None and s != EXT for s in srcs):
            return "untouched"
        return f"mixed: {srcs}"

    def mapping(self, ids: list[int]) -> set[tuple[str, int | None]]:
        return {(F.parse_ip4(self.out[i]).src, F.parse_ip4(self.out[i]).sport) for i in ids
                if i in self.out}


# (what, kernel, nfpark): the fate of each kind of packet in each NAT.
EXPECTED = [
    ("tcp", "translated", "translated"),
    ("tcp_data_unanswered", "untouched", "translated"),  # conntrack: INVALID, not NATed
    ("udp_a", "translated", "translated"),
    ("udp_b", "translated", "translated"),
    ("echo", "translated", "translated"),
    ("error_matched", "translated", "translated"),
    ("error_stray", "untouched", "dropped"),      # RFC 5508 REQ-5: no mapping -> drop
    ("frag_in_order", "translated", "translated"),
    ("frag_late", "translated", "translated"),    # but see the completeness check below
    ("gre", "translated", "untouched"),           # kernel: address-only NAT for GRE/ESP
    ("esp", "translated", "untouched"),
    ("ttl1", "dropped", "translated"),            # the kernel routes: TTL 1 expires
    ("tcp_bad_checksum", "untouched", "translated"),  # conntrack: INVALID, not NATed
]


def test_nat_against_linux_masquerade(router: bytes, nfpark_binary: Path, tmp_path: Path) -> None:
    trace = build_trace()
    to_router = [router + f[6:] for f in trace.frames]  # addressed to the router's inside MAC
    pcap = F.write_pcap(tmp_path / "trace.pcap", to_router, step_us=2000)

    cap = tmp_path / "kernel.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", NS_OUT, "dumpcap", "-q", "-P", "-i", IF_OUT,
                             "-w", str(cap)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 10
        while not cap.exists() and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        replay = ns(NS_IN, "tcpreplay", "-q", "-i", IF_IN, str(pcap), check=False)
        assert replay.returncode == 0, replay.stderr
        time.sleep(1.0)
    finally:
        dump.send_signal(signal.SIGINT)
        dump.wait(timeout=10)
    kernel = Seen(datagrams(cap), ipv6_count(cap))

    cfg = tmp_path / "nat.toml"
    cfg.write_text(f'[nf.nat]\nexternal = ["{EXT}"]\n')
    res = cli.run(pcap, tmp_path / "nfpark.pcap", "baseline", "nat", config=cfg)
    cli.assert_accounting(res)
    nfpark = Seen(datagrams(tmp_path / "nfpark.pcap"), ipv6_count(tmp_path / "nfpark.pcap"))

    got = [(what, kernel.fate(trace.ids[what]), nfpark.fate(trace.ids[what]))
           for what, _, _ in EXPECTED]
    assert got == EXPECTED, "\n".join(map(str, got))  # (what, kernel, nfpark)
    assert kernel.v6 == nfpark.v6 == 1, "IPv6 passes both, untranslated (no NAT66)"

    for name, seen in (("kernel", kernel), ("nfpark", nfpark)):
        # One mapping per flow, distinct across flows (udp_b's port clashes with udp_a's).
        maps = {w: seen.mapping(trace.ids[w]) for w in ("tcp", "udp_a", "udp_b", "echo")}
        assert all(len(m) == 1 for m in maps.values()), (name, maps)
        assert len(set().union(*maps.values())) == 4, (name, maps)
        # The error's quote is udp_a's reply as the remote sent it: to EXT, to udp_a's port.
        err = seen.out[trace.ids["error_matched"][0]]
        quote = F.parse_ip4(F.quote_of(err))
        assert (quote.src, quote.dst, quote.sport) == ("8.8.8.8", EXT, 53), name
        assert (EXT, quote.dport) in maps["udp_a"], (name, quote, maps["udp_a"])
        assert F.ip_checksum_ok(err) and F.l4_checksum_ok(err), name
        assert F.ip_checksum_ok(F.quote_of(err)), name
        # The fragmented datagram leaves whole and consistent.
        dg = seen.out[trace.ids["frag_in_order"][0]]
        assert F.l4_checksum_ok(dg) and F.parse_ip4(dg).dport == 9000, name
    # Fragments before their first, more than a burst ahead: the kernel reassembles and sends
    # the whole datagram; nfpark, which does not reassemble, drops them (frag_no_first).
    late = trace.ids["frag_late"][0]
    assert len(F.parse_ip4(kernel.out[late]).l4) == 8 + 3000
    assert len(F.parse_ip4(nfpark.out[late]).l4) == 1480
    assert res["nf"]["nat.drop.frag_no_first"] == 2
    ttl = {n: F.parse_ip4(s.out[trace.ids["udp_b"][0]]).ttl for n, s in
           (("kernel", kernel), ("nfpark", nfpark))}
    assert ttl == {"kernel": 63, "nfpark": 64}, "the kernel routes (TTL - 1); nfpark does not"
