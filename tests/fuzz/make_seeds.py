#!/usr/bin/env python3
"""Writes the hand-made seeds of the fuzz corpora (tests/fuzz/corpus/*/seed-*), deterministic.

    python3 tests/fuzz/make_seeds.py

inputs: capture files of every shape the reader knows (classic pcap in µs and ns, both byte
orders; pcapng with an if_tsresol option (no if_tsoffset: see fuzz_inputs.cc), enhanced/simple/obsolete packet blocks, an unknown block
and a second section), each behind the selector byte 0x00, and frames (IPv4/IPv6, TCP/UDP,
VLAN, QinQ, options, extension header, ICMP, ARP) behind 0x01.
config: TOML run configs touching every section and key the loader knows.
The rest of each corpus is what libFuzzer found and kept (`-merge=1`, docs/testing.md).
"""

from __future__ import annotations

import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(ethertype: int, vlans: tuple[int, ...] = ()) -> bytes:
    h = bytes.fromhex("020000000002020000000001")
    for i, vid in enumerate(vlans):
        tpid = 0x88A8 if i == 0 and len(vlans) == 2 else 0x8100
        h += struct.pack("!HH", tpid, vid)
    return h + struct.pack("!H", ethertype)


def ipv4(proto: int, payload: bytes, opts: bytes = b"", dscp: int = 0) -> bytes:
    ihl = 5 + len(opts) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, dscp << 2, 20 + len(opts) + len(payload), 7, 0,
                    64, proto, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ipv6(nh: int, payload: bytes, hbh: bool = False) -> bytes:
    src, dst = bytes(15) + b"\1", bytes(15) + b"\2"
    if hbh:
        payload = bytes([nh, 0, 1, 4, 0, 0, 0, 0]) + payload
        nh = 0
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), nh, 64, src, dst) + payload


def udp(n: int) -> bytes:
    return struct.pack("!HHHH", 1234, 80, 8 + n, 0) + b"NFPK" + bytes(i % 256 for i in range(n - 4))


def tcp(n: int) -> bytes:
    return struct.pack("!HHIIBBHHH", 1234, 80, 1, 0, 0x50, 0x18, 65535, 0, 0) + bytes(n)


FRAMES = [
    eth(0x0800) + ipv4(17, udp(200)),
    eth(0x0800, (5,)) + ipv4(6, tcp(40), opts=b"\1\1\1\0"),
    eth(0x86DD, (5, 6)) + ipv6(17, udp(30), hbh=True),
    eth(0x86DD) + ipv6(6, tcp(600)),
    eth(0x0800) + ipv4(1, bytes([8, 0, 0, 0, 0, 1, 0, 1]) + bytes(20)),
    eth(0x0800) + ipv4(17, udp(400), dscp=63),
    eth(0x0806) + bytes(28),
]


def pcap(frames: list[bytes], nano: bool, big: bool) -> bytes:
    e = ">" if big else "<"
    out = struct.pack(e + "IHHiIII", 0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)
    for i, f in enumerate(frames):
        out += struct.pack(e + "IIII", 1700000000 + i, 999 * i, len(f), len(f) + i) + f
    return out


def block(btype: int, body: bytes) -> bytes:
    body += bytes(-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def pcapng(frames: list[bytes]) -> bytes:
    shb = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    opts = struct.pack("<HHB3x", 9, 1, 9) + bytes(4)  # if_tsresol 9 (ns), end of options
    idb = block(1, struct.pack("<HHI", 1, 0, 65535) + opts)
    out = shb + idb
    for i, f in enumerate(frames):
        ts = 1_700_000_000_000_000_000 + i
        out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(f), len(f)) + f)
    out += block(3, struct.pack("<I", len(frames[0])) + frames[0])
    out += block(2, struct.pack("<HHIIII", 0, 0, 0, 1, len(frames[1]), len(frames[1])) + frames[1])
    out += block(0x0BAD, b"unknown block")
    return out + shb + block(1, struct.pack("<HHI", 1, 0, 0)) + block(3, struct.pack("<I", 60)
                                                                      + frames[6])


CONFIGS = {
    "payloadpark": """[run]
mode = "payloadpark"
chain = "firewall,nat,lb"
in = "in.pcap"
out = "out.pcap"
nf_lcore = true
timeout_s = 30
[park]
park_bytes = "all"
slots = 4096
max_exp = 2
format = "nfpark"
key = "00112233445566778899aabbccddeeff"
[park.no_split]
dst_prefixes = ["10.0.0.0/8", "2001:db8::/32"]
dst_ports = [53]
protocols = [17]
[faults]
drop = 0.1
dup = 0.05
reorder = 0.2
corrupt_tag = 0.01
delay_us = 40
seed = 3
""",
    "queuemem": """[run]
mode = "queuemem"
reframe_us = 50
pace = true
[queuemem]
queues = 8
slices = 2
batch = 5
header_array = 1024
min_payload = 64
[nf.nat]
""",
    "nfslicer": """[run]
mode = "nfslicer"
role = "switch"
nf_port = "vdev:net_memif0,role=server"
[nfslicer]
thr = 500
slice_bytes = 160
entries = 1024
ttl = 4
[nicmem]
header_segment = 128
pool = 4096
""",
}


def main() -> None:
    inputs = HERE / "corpus" / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    for nano in (False, True):
        for big in (False, True):
            name = f"seed-pcap-{'ns' if nano else 'us'}-{'be' if big else 'le'}"
            (inputs / name).write_bytes(b"\0" + pcap(FRAMES, nano, big))
    (inputs / "seed-pcapng").write_bytes(b"\0" + pcapng(FRAMES))
    for i, f in enumerate(FRAMES):
        (inputs / f"seed-frame-{i}").write_bytes(b"\1" + f)
    config = HERE / "corpus" / "config"
    config.mkdir(parents=True, exist_ok=True)
    for name, text in CONFIGS.items():
        (config / f"seed-{name}.toml").write_text(text)


if __name__ == "__main__":
    main()
