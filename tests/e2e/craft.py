"""Crafted traffic for the "only its own packets" tests: a pcap writer that keeps wire lengths,
frame surgery on generated traces (DSCP, truncation, trailers, payload bytes), and the tokens
an attacker could predict before tokens were keyed (the old fixed-seed generation scrambler).

Independent of the C++ code on purpose: the tests must catch its mistakes, not share them.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

from . import nfpark_cli as cli

M64 = (1 << 64) - 1
ESCAPE_TOKEN = 0xFF4E465345534350


def write_pcap(path: Path, frames: Sequence[tuple[bytes, int]]) -> Path:
    """A µs pcap of (captured bytes, wire length) records, 1 µs apart."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, (data, wire) in enumerate(frames):
        out += struct.pack("<IIII", 1, i, len(data), max(wire, len(data))) + data
    path.write_bytes(bytes(out))
    return path


def ip_checksum(hdr: bytes) -> int:
    s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def set_dscp(frame: bytes, dscp: int) -> bytes:
    """The frame with its DSCP set (ECN kept; IPv4 header checksum recomputed)."""
    p = cli.parse(frame)
    assert p is not None
    b = bytearray(frame)
    l3 = p.l3_off
    if p.ipv == 4:
        b[l3 + 1] = (dscp << 2) | (b[l3 + 1] & 3)
        ihl = (b[l3] & 0x0F) * 4
        b[l3 + 10:l3 + 12] = b"\0\0"
        b[l3 + 10:l3 + 12] = struct.pack("!H", ip_checksum(bytes(b[l3:l3 + ihl])))
    else:
        tc = ((b[l3] & 0x0F) << 4 | b[l3 + 1] >> 4)
        tc = (dscp << 2) | (tc & 3)
        b[l3] = (b[l3] & 0xF0) | tc >> 4
        b[l3 + 1] = (b[l3 + 1] & 0x0F) | (tc & 0x0F) << 4
    return bytes(b)


def put_payload(frame: bytes, head: bytes) -> bytes:
    """The frame with its L4 payload starting with `head` (the payload id is overwritten)."""
    p = cli.parse(frame)
    assert p is not None
    return frame[:p.payload_off] + head + frame[p.payload_off + len(head):]


def _mix64(x: int) -> int:  # splitmix64's finaliser, as src/core/flow_key.h mix64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def old_token(k: int, entries: int = 4096) -> int:
    """The token the slicer gave its k-th slice (0-based) on core 0 before tokens were keyed:
    generation = the fixed-seed scrambler of the insert counter, index = k mod N."""
    index_bits = entries.bit_length() - 1
    bits = 64 - 8 - index_bits
    mask = (1 << bits) - 1
    key = _mix64(0)  # seed 0 + core 0
    k0 = _mix64(key ^ 0x6E66736C69636572)
    k1 = _mix64((key + 0x9E3779B97F4A7C15) & M64)
    m0 = _mix64((key + 2 * 0x9E3779B97F4A7C15) & M64) | 1
    m1 = _mix64((key + 3 * 0x9E3779B97F4A7C15) & M64) | 1
    s = max(1, bits // 2)
    x = k + 1
    x = (x ^ k0) & mask
    x = (x * m0) & mask
    x ^= x >> s
    x = (x + k1) & mask
    x = (x * m1) & mask
    x ^= x >> s
    return (x & mask) << index_bits | (k % entries)


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return ~crc & 0xFFFFFFFF


def unkeyed_nfpark_tag(index: int, generation: int, orig_len: int, parked: int) -> bytes:
    """A 24-byte nfpark tag as unkeyed codecs wrote it (CRC-32C check): what a PayloadPark or
    QUEUE-MEM tag looked like before every run keyed its tags."""
    head = struct.pack("!BBBBIIHH", 0x4E, 0x11, 0, 0, index, generation, orig_len, parked)
    return head + struct.pack("<Q", crc32c(head))
