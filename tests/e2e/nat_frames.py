"""Frames for the NAT's end-to-end tests, built and checked independently of the C++ code.

A tiny builder (Ethernet, IPv4, IPv6, TCP, UDP, ICMP, other protocols, ICMP errors quoting a
datagram, IPv4 fragments) with every checksum computed here, a pcap writer, and a parser that
reads back what a NAT made of them: addresses, ports or ICMP identifier, and for ICMP errors the
quoted datagram — with checksums verified from scratch.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from pathlib import Path

MAC_A = bytes.fromhex("020000000001")
MAC_B = bytes.fromhex("020000000002")
TCP, UDP, ICMP, GRE, ESP = 6, 17, 1, 47, 50


def csum(data: bytes) -> int:
    """RFC 1071 Internet checksum (the value to store)."""
    if len(data) % 2:
        data += b"\0"
    s: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def addr(a: str) -> bytes:
    return ipaddress.ip_address(a).packed


def ipv4(src: str, dst: str, proto: int, l4: bytes, ident: int, ttl: int = 64,
         frag: int = 0, total: int | None = None) -> bytes:
    """An IPv4 packet (20-byte header) carrying `l4`; `frag` is the flags/offset word."""
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total or 20 + len(l4), ident, frag, ttl, proto, 0,
                      addr(src), addr(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + l4


def _pseudo(src: str, dst: str, proto: int, n: int) -> bytes:
    return addr(src) + addr(dst) + struct.pack("!BBH", 0, proto, n)


def udp(src: str, dst: str, sp: int, dp: int, payload: bytes) -> bytes:
    seg = struct.pack("!HHHH", sp, dp, 8 + len(payload), 0) + payload
    c = csum(_pseudo(src, dst, UDP, len(seg)) + seg) or 0xFFFF
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def tcp(src: str, dst: str, sp: int, dp: int, flags: int, payload: bytes = b"",
        seq: int = 1000) -> bytes:
    seg = struct.pack("!HHIIBBHHH", sp, dp, seq, 0, 5 << 4, flags, 65535, 0, 0) + payload
    c = csum(_pseudo(src, dst, TCP, len(seg)) + seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def icmp(typ: int, code: int, rest: bytes, payload: bytes) -> bytes:
    msg = struct.pack("!BBH", typ, code, 0) + rest + payload
    return msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]


def echo(ident: int, seq: int, payload: bytes, reply: bool = False) -> bytes:
    return icmp(0 if reply else 8, 0, struct.pack("!HH", ident, seq), payload)


def eth(ip: bytes, ethertype: int = 0x0800, dst: bytes = MAC_B, src: bytes = MAC_A) -> bytes:
    return dst + src + struct.pack("!H", ethertype) + ip


def icmp_error(src: str, dst: str, typ: int, code: int, quoted_ip: bytes, ident: int,
               quote: int = 548) -> bytes:
    """An ICMP error frame from `src` to `dst` quoting the first `quote` bytes of `quoted_ip`."""
    return eth(ipv4(src, dst, ICMP, icmp(typ, code, b"\0" * 4, quoted_ip[:quote]), ident))


def fragments(ip: bytes, chunk: int) -> list[bytes]:
    """The IPv4 fragments of `ip` (20-byte header), payload cut into `chunk`-byte pieces."""
    hdr, body = ip[:20], ip[20:]
    out = []
    for at in range(0, len(body), chunk):
        piece = body[at:at + chunk]
        more = 0x2000 if at + chunk < len(body) else 0
        h = bytearray(hdr)
        struct.pack_into("!HHH", h, 2, 20 + len(piece), struct.unpack_from("!H", hdr, 4)[0],
                         more | (at // 8))
        struct.pack_into("!H", h, 10, 0)
        struct.pack_into("!H", h, 10, csum(bytes(h)))
        out.append(bytes(h) + piece)
    return out


def ipv6_udp(src: str, dst: str, sp: int, dp: int, payload: bytes, flow: int) -> bytes:
    seg = struct.pack("!HHHH", sp, dp, 8 + len(payload), 0) + payload
    pseudo = addr(src) + addr(dst) + struct.pack("!IxxxB", len(seg), UDP)
    seg = seg[:6] + struct.pack("!H", csum(pseudo + seg) or 0xFFFF) + seg[8:]
    hdr = struct.pack("!IHBB16s16s", (6 << 28) | flow, len(seg), UDP, 64, addr(src), addr(dst))
    return eth(hdr + seg, 0x86DD)


def write_pcap(path: Path, frames: list[bytes], step_us: int = 100) -> Path:
    """A classic microsecond pcap, one frame every `step_us` µs."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, f in enumerate(frames):
        t = 1_700_000_000_000_000 + i * step_us
        out += struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(f), len(f)) + f
    path.write_bytes(bytes(out))
    return path


# ---------------------------------------------------------------------------------------------
# reading back


@dataclass(frozen=True)
class Ip4:
    """An IPv4 packet as a NAT test looks at it (the frame must be untagged Ethernet)."""

    src: str
    dst: str
    proto: int
    ident: int
    ttl: int
    frag: int               # flags/offset word
    sport: int | None       # TCP/UDP source port, ICMP query identifier; None otherwise
    dport: int | None
    icmp_type: int | None
    l4: bytes               # everything after the IP header

    @property
    def later_fragment(self) -> bool:
        return (self.frag & 0x1FFF) != 0


def parse_ip4(ip: bytes) -> Ip4:
    ihl = (ip[0] & 0x0F) * 4
    total, ident, frag, ttl, proto = struct.unpack_from("!HHHBB", ip, 2)
    l4 = ip[ihl:total]
    sport = dport = typ = None
    if not frag & 0x1FFF:
        if proto in (TCP, UDP) and len(l4) >= 4:
            sport, dport = struct.unpack_from("!HH", l4)
        elif proto == ICMP and len(l4) >= 8:
            typ = l4[0]
            if typ in (0, 8, 13, 14, 15, 16, 17, 18):
                sport = dport = struct.unpack_from("!H", l4, 4)[0]
    src, dst = (str(ipaddress.ip_address(ip[o:o + 4])) for o in (12, 16))
    return Ip4(src, dst, proto, ident, ttl, frag, sport, dport, typ, l4)


def ip_of(frame: bytes) -> bytes | None:
    """The IPv4 packet of an untagged Ethernet frame, None for anything else."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return None
    return frame[14:14 + struct.unpack_from("!H", frame, 16)[0]]


def ip_checksum_ok(ip: bytes) -> bool:
    return csum(ip[:(ip[0] & 0x0F) * 4]) == 0


def l4_checksum_ok(ip: bytes) -> bool:
    """The whole datagram's transport checksum (TCP, UDP with a pseudo-header; ICMP without)."""
    p = parse_ip4(ip)
    if p.proto == ICMP:
        return csum(p.l4) == 0
    if p.proto == UDP and p.l4[6:8] == b"\0\0":
        return True
    return csum(_pseudo(p.src, p.dst, p.proto, len(p.l4)) + p.l4) == 0


def quote_of(ip: bytes) -> bytes:
    """The datagram an ICMP error quotes (after the 8-byte ICMP header)."""
    return parse_ip4(ip).l4[8:]


def reassemble(pieces: list[bytes]) -> bytes:
    """One IPv4 datagram from its fragments (any order)."""
    pieces = sorted(pieces, key=lambda p: struct.unpack_from("!H", p, 6)[0] & 0x1FFF)
    body = b"".join(p[(p[0] & 0x0F) * 4:struct.unpack_from("!H", p, 2)[0]] for p in pieces)
    h = bytearray(pieces[0][:20])
    struct.pack_into("!HHH", h, 2, 20 + len(body), struct.unpack_from("!H", h, 4)[0], 0)
    struct.pack_into("!H", h, 10, 0)
    struct.pack_into("!H", h, 10, csum(bytes(h)))
    return bytes(h) + body
