"""The NAT on traffic it used to drop, through `nfpark run` in every mode.

One trace holds both directions of TCP, UDP and ICMP echo flows, ICMP errors about them both
ways (large enough to be parked: the quote must be translated on header-only packets), IPv4
fragments in order, out of order within a burst and out of order across bursts, GRE, IPv6, ARP,
transit traffic and unmapped packets. Inbound packets must be addressed to the external port
the NAT chose, so the trace is built in two steps: the outbound flows first, through baseline,
to learn their mappings; then the whole trace. Every mode must give baseline's output, and the
translated frames are checked here, from scratch, by an independent parser (nat_frames.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import nat_frames as F
from . import nfpark_cli as cli
from .lab import Lab

EXT = "198.51.100.1"
CONFIG = f'[nf.nat]\nexternal = ["{EXT}"]\ninside = ["10.0.0.0/8"]\n'
CHAIN = "nat,counter"
MODES = ("baseline", *cli.ALL_PARK_MODES)
ROUTER = "192.0.2.1"


class Ids:
    """IPv4 identification values, one per packet, so that output frames map to input ones."""

    def __init__(self) -> None:
        self.n = 100

    def __call__(self) -> int:
        self.n += 1
        return self.n


def outbound(ids: Ids) -> dict[str, bytes]:
    """The inside hosts' first packets: name -> IPv4 packet."""
    return {
        "udp": F.ipv4("10.0.0.5", "8.8.8.8", F.UDP,
                      F.udp("10.0.0.5", "8.8.8.8", 5555, 53, bytes(600)), ids()),
        "tcp": F.ipv4("10.0.0.5", "93.184.216.34", F.TCP,
                      F.tcp("10.0.0.5", "93.184.216.34", 40000, 80, 0x02), ids()),
        "tcp_data": F.ipv4("10.0.0.5", "93.184.216.34", F.TCP,
                           F.tcp("10.0.0.5", "93.184.216.34", 40000, 80, 0x18, bytes(1000)),
                           ids()),
        "echo": F.ipv4("10.0.0.6", "9.9.9.9", F.ICMP, F.echo(0x4242, 1, bytes(800)), ids()),
        "frag": F.ipv4("10.0.0.7", "203.0.113.9", F.UDP,
                       F.udp("10.0.0.7", "203.0.113.9", 7000, 9000, bytes(3000)), ids()),
    }


def build_trace(tmp: Path) -> tuple[Path, dict[str, object]]:
    """The two-step trace (see the module doc) and what the checks need to know of it."""
    ids = Ids()
    first = outbound(ids)
    step1 = [F.eth(ip) for name, ip in first.items() if name != "frag"]
    step1 += [F.eth(p) for p in F.fragments(first["frag"], 1480)]
    cfg = tmp / "nat.toml"
    cfg.write_text(CONFIG)
    res = cli.run(F.write_pcap(tmp / "step1.pcap", step1), tmp / "step1-out.pcap", "baseline",
                  CHAIN, config=cfg)
    assert res["nf"]["nat.outbound"] == 5, res["nf"]  # later fragments: frag_followed
    # What each outbound packet became (a fragmented datagram: its first fragment).
    out_by_id = {F.parse_ip4(ip).ident: ip for ip in
                 (F.ip_of(f) for f in cli.frame_bytes(tmp / "step1-out.pcap"))
                 if ip is not None and not F.parse_ip4(ip).later_fragment}
    sent = {name: out_by_id[F.parse_ip4(ip).ident] for name, ip in first.items()}
    port = {name: F.parse_ip4(ip).sport for name, ip in sent.items()}
    assert all(isinstance(p, int) and p >= 1024 for p in port.values()), port

    frames = list(step1)
    marks: dict[str, int] = {}

    def add(name: str, ip: bytes) -> None:
        marks[name] = F.parse_ip4(ip).ident
        frames.append(F.eth(ip))

    p_udp, p_tcp, p_echo, p_frag = (int(port[k] or 0) for k in ("udp", "tcp", "echo", "frag"))
    reply = F.ipv4("8.8.8.8", EXT, F.UDP, F.udp("8.8.8.8", EXT, 53, p_udp, bytes(600)), ids())
    add("udp_reply", reply)
    add("tcp_reply", F.ipv4("93.184.216.34", EXT, F.TCP,
                            F.tcp("93.184.216.34", EXT, 80, p_tcp, 0x12, bytes(900)), ids()))
    add("echo_reply", F.ipv4("9.9.9.9", EXT, F.ICMP, F.echo(p_echo, 1, bytes(800), True), ids()))
    # Errors from a router about the outbound packets (quote: 548 bytes, RFC 1812 style).
    for name in ("udp", "tcp_data", "echo"):
        typ, code = (3, 4) if name == "echo" else (11, 0)
        add(f"error_in_{name}", F.ipv4(ROUTER, EXT, F.ICMP,
                                       F.icmp(typ, code, b"\0" * 4, sent[name][:548]), ids()))
    # The inside host answers the UDP reply with port unreachable, quoting it as delivered.
    delivered = F.ipv4("8.8.8.8", "10.0.0.5", F.UDP,
                       F.udp("8.8.8.8", "10.0.0.5", 53, 5555, bytes(600)),
                       F.parse_ip4(reply).ident)
    add("error_out_udp", F.ipv4("10.0.0.5", "8.8.8.8", F.ICMP,
                                F.icmp(3, 3, b"\0" * 4, delivered[:548]), ids()))
    # Errors that belong to no flow: dropped (RFC 5508 REQ-4/5).
    stray = F.ipv4(EXT, "8.8.8.8", F.UDP, F.udp(EXT, "8.8.8.8", 999, 53, bytes(40)), ids())
    add("error_in_stray", F.ipv4(ROUTER, EXT, F.ICMP, F.icmp(3, 1, b"\0" * 4, stray), ids()))
    # A fragmented reply to the fragmented flow, its fragments reversed within one burst.
    frag_reply = F.ipv4("203.0.113.9", EXT, F.UDP,
                        F.udp("203.0.113.9", EXT, 9000, p_frag, bytes(3000)), ids())
    marks["frag_reply"] = F.parse_ip4(frag_reply).ident
    frames += [F.eth(p) for p in reversed(F.fragments(frag_reply, 1480))]
    # A second outbound datagram whose later fragments come 40 packets before its first.
    late = F.ipv4("10.0.0.7", "203.0.113.9", F.UDP,
                  F.udp("10.0.0.7", "203.0.113.9", 7000, 9000, bytes(3000)), ids())
    marks["frag_late"] = F.parse_ip4(late).ident
    pieces = F.fragments(late, 1480)
    frames += [F.eth(p) for p in pieces[1:]]
    for _ in range(40):
        frames.append(F.eth(F.ipv4("10.0.0.5", "8.8.8.8", F.UDP,
                                   F.udp("10.0.0.5", "8.8.8.8", 5555, 53, bytes(200)), ids())))
    frames.append(F.eth(pieces[0]))
    # Other protocols, IPv6, ARP, transit, an unmapped inbound packet.
    add("gre", F.ipv4("10.0.0.5", "8.8.8.8", F.GRE, bytes(300), ids()))
    frames.append(F.ipv6_udp("fd00::1", "2001:db8::1", 1, 2, bytes(300), 7))
    frames.append(F.eth(bytes(46), 0x0806))
    add("transit", F.ipv4("172.16.0.1", "8.8.8.8", F.UDP,
                          F.udp("172.16.0.1", "8.8.8.8", 1, 2, bytes(300)), ids()))
    add("unmapped", F.ipv4("8.8.8.8", EXT, F.UDP, F.udp("8.8.8.8", EXT, 53, 7, bytes(300)),
                           ids()))
    info: dict[str, object] = {"marks": marks, "first": first, "reply": reply, "config": cfg}
    return F.write_pcap(tmp / "nat-mixed.pcap", frames), info


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    return build_trace(tmp_path_factory.mktemp("nat"))


def by_ident(path: Path) -> dict[int, list[bytes]]:
    out: dict[int, list[bytes]] = {}
    for f in cli.frame_bytes(path):
        ip = F.ip_of(f)
        if ip is not None:
            out.setdefault(F.parse_ip4(ip).ident, []).append(ip)
    return out


def test_translations_checked_from_scratch(lab: Lab,
                                           mixed: tuple[Path, dict[str, object]]) -> None:
    trace, info = mixed
    marks: dict[str, int] = info["marks"]  # type: ignore[assignment]
    first: dict[str, bytes] = info["first"]  # type: ignore[assignment]
    out, res = lab.baseline(trace, CHAIN, info["config"])  # type: ignore[arg-type]
    nat = {k[4:]: v for k, v in res["nf"].items() if k.startswith("nat.")}
    assert nat["icmp_errors_in"] == 3 and nat["icmp_errors_out"] == 1, nat
    assert nat["drop.icmp_error_no_mapping"] == 1, nat
    assert nat["frag_followed"] == 2 + 2, nat     # the first datagram's and the reply's
    assert nat["drop.frag_no_first"] == 2, nat    # the late datagram's, before their first
    assert nat["other_passed"] == 1 and nat["drop.no_mapping"] == 1, nat
    assert nat["passthrough"] == 3, nat               # IPv6, ARP, transit
    got = by_ident(out)
    # Inbound errors: sent to the inside host, quoting exactly what it sent.
    for name, inside in (("udp", "10.0.0.5"), ("tcp_data", "10.0.0.5"), ("echo", "10.0.0.6")):
        (ip,) = got[marks[f"error_in_{name}"]]
        p = F.parse_ip4(ip)
        assert (p.src, p.dst) == (ROUTER, inside), name
        assert F.ip_checksum_ok(ip) and F.l4_checksum_ok(ip), f"{name}: checksums"
        q = F.quote_of(ip)
        assert q == first[name][:len(q)], f"{name}: the quote is not what the inside host sent"
        assert F.ip_checksum_ok(q), f"{name}: the quote's IP checksum"
    # The outbound error: from the external address, quoting what the remote host sent.
    (ip,) = got[marks["error_out_udp"]]
    p = F.parse_ip4(ip)
    assert (p.src, p.dst) == (EXT, "8.8.8.8")
    assert F.ip_checksum_ok(ip) and F.l4_checksum_ok(ip)
    q = F.quote_of(ip)
    reply: bytes = info["reply"]  # type: ignore[assignment]
    assert q == reply[:len(q)], "the quote is not what the remote host sent"
    # The fragmented reply: every fragment to the inside host, the datagram's checksum right.
    pieces = got[marks["frag_reply"]]
    assert len(pieces) == 3 and {F.parse_ip4(x).dst for x in pieces} == {"10.0.0.7"}
    whole = F.reassemble(pieces)
    assert F.l4_checksum_ok(whole) and F.parse_ip4(whole).dport == 7000
    # The late datagram: its first fragment came 40 packets after the others, which had
    # nothing to follow; the first passes alone.
    late = got[marks["frag_late"]]
    assert len(late) == 1 and not F.parse_ip4(late[0]).later_fragment
    assert marks["gre"] in got and marks["transit"] in got and marks["unmapped"] not in got
    assert F.parse_ip4(got[marks["gre"]][0]).src == "10.0.0.5", "GRE passes untranslated"


@pytest.mark.parametrize("mode", cli.ALL_PARK_MODES)
def test_every_mode_equals_baseline(lab: Lab, mixed: tuple[Path, dict[str, object]],
                                    mode: str) -> None:
    trace, info = mixed
    cfg: Path = info["config"]  # type: ignore[assignment]
    runs = lab.modes(trace, CHAIN, MODES, config=cfg)
    base_out, base_proc = runs["baseline"]
    out, proc = runs[mode]
    base, res = cli.result(base_proc), cli.result(proc)
    cli.assert_accounting(res)
    assert res["held_at_exit"] == 0
    assert res["nf"] == {**res["nf"], **{k: v for k, v in base["nf"].items()
                                         if k.startswith("nat.")}}, "NAT counters differ"
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, out)
    else:
        cli.assert_same_pcap(base_out, out)
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0


def test_hundred_thousand_flows_fit_the_default_pool(lab: Lab, tmp_path: Path) -> None:
    """Issue 13: one external address lost 35% of a 100k-flow trace as pool_exhausted."""
    trace = lab.trace(100_000, flows=100_000, seed=13)
    p = cli.start_run(trace, tmp_path / "out.pcap", "baseline", "nat")
    res = cli.result(p)
    assert res["nf"]["nat.flows_created"] == 100_000, res["nf"]
    assert res["nf"]["nat.drop.pool_exhausted"] == 0
    assert res["warnings"] == [] and "warning" not in p.stderr, p.stderr


def test_pool_exhaustion_is_warned_about_on_stderr(lab: Lab, tmp_path: Path) -> None:
    trace = lab.trace(2000, flows=1000, seed=14)
    cfg = tmp_path / "small.toml"
    cfg.write_text('[nf.nat]\nexternal = ["198.51.100.1"]\nport_min = 5000\nport_max = 5099\n')
    p = cli.start_run(trace, tmp_path / "out.pcap", "baseline", "nat", config=cfg)
    res = cli.result(p)
    dropped = res["nf"]["nat.drop.pool_exhausted"]
    assert dropped > 0
    lines = [ln for ln in p.stderr.splitlines() if "warning" in ln]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("nfpark run: warning: nat: ") and f"{dropped} packets" in lines[0]
    assert "[nf.nat] external" in lines[0]
    assert res["warnings"] == [lines[0].removeprefix("nfpark run: warning: ")]
