"""Packet ids and flows from classic pcap files, and RFC 4737 reordering per flow.

`nfpark trace reorder` measures reordering over the whole received stream. QUEUE-MEM's Fig. 11
measures it per flow ("the maximum distance between two packets of the same flow"), which this
module computes from the generator's packet ids (payload: b"NFPK" + big-endian 64-bit id).
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ID_MAGIC = b"NFPK"
_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<",
           b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}


def frames(path: Path) -> Iterator[bytes]:
    """The captured bytes of every packet of a classic Ethernet pcap file (either byte order, us
    or ns), as nfpark writes them. Another link type (Wi-Fi, Linux cooked, ...) is a ValueError:
    its frames do not start with an Ethernet header, so their flows would be garbage."""
    data = path.read_bytes()
    endian = _MAGICS.get(data[:4])
    if endian is None:
        raise ValueError(f"{path}: not a classic pcap file (magic {data[:4].hex()})")
    if len(data) < 24:
        raise ValueError(f"{path}: pcap file header truncated ({len(data)} of 24 bytes)")
    link = struct.unpack_from(endian + "I", data, 20)[0] & 0xFFFF  # the upper bits: FCS, flags
    if link != 1:
        raise ValueError(f"{path}: link type {link} is not Ethernet (1); convert it first with "
                         "`nfpark trace pad IN OUT`, which writes Ethernet (docs/traces.md)")
    off = 24
    rec = struct.Struct(endian + "IIII")
    while off < len(data):
        if off + rec.size > len(data):
            raise ValueError(f"{path}: truncated packet record header at byte {off}")
        _, _, caplen, _ = rec.unpack_from(data, off)
        off += rec.size
        if off + caplen > len(data):
            raise ValueError(f"{path}: truncated packet record at byte {off}")
        yield data[off:off + caplen]
        off += caplen


def flow_key(frame: bytes) -> bytes:
    """Protocol, addresses and ports of an Ethernet (+802.1Q) IPv4/IPv6 frame; b"" if not IP."""
    off, etype = 14, frame[12:14]
    while etype in (b"\x81\x00", b"\x88\xa8") and len(frame) >= off + 4:
        etype, off = frame[off + 2:off + 4], off + 4
    if etype == b"\x08\x00" and len(frame) >= off + 20:
        l4 = off + (frame[off] & 0x0F) * 4
        return frame[off + 9:off + 10] + frame[off + 12:off + 20] + frame[l4:l4 + 4]
    if etype == b"\x86\xdd" and len(frame) >= off + 40:
        return frame[off + 6:off + 7] + frame[off + 8:off + 40] + frame[off + 40:off + 44]
    return b""


def packet_id(frame: bytes) -> int | None:
    """The generator's packet id (first b"NFPK" after the Ethernet header), or None."""
    at = frame.find(ID_MAGIC, 14)
    if at < 0 or at + 12 > len(frame):
        return None
    value: int = struct.unpack_from(">Q", frame, at + 4)[0]
    return value


@dataclass(frozen=True)
class Reordering:
    """RFC 4737 over one or more sequences: §3.3 reordered packets, §4.2 extents."""

    matched: int
    reordered: int
    extent_max: int
    extent_mean: float

    @property
    def out_of_order_pct(self) -> float:
        return 100.0 * self.reordered / self.matched if self.matched else 0.0


def _sequence(send_pos: Sequence[int]) -> tuple[int, list[int]]:
    """Reordered count and extents of one arrival sequence of send positions."""
    next_exp = 0
    reordered = 0
    extents: list[int] = []
    prefix_max: list[int] = []
    for i, s in enumerate(send_pos):
        if s >= next_exp:
            next_exp = s + 1
        else:
            reordered += 1
            j = bisect.bisect_right(prefix_max, s)  # earliest arrival with a larger send position
            extents.append(i - j)
        prefix_max.append(s if not prefix_max else max(prefix_max[-1], s))
    return reordered, extents


def reordering(sequences: Sequence[Sequence[int]]) -> Reordering:
    matched = reordered = 0
    extents: list[int] = []
    for seq in sequences:
        r, e = _sequence(seq)
        matched += len(seq)
        reordered += r
        extents += e
    return Reordering(matched, reordered, max(extents, default=0),
                      sum(extents) / len(extents) if extents else 0.0)


def per_flow_reordering(sent: Path, received: Path) -> tuple[Reordering, Reordering]:
    """(per flow, whole stream) reordering of `received` against `sent`, matched by packet id.

    Flows are the sent packets' 5-tuples (so an NF that rewrites headers does not split them);
    received packets without a known id are ignored (counted by `nfpark trace reorder`).
    """
    flow_of: dict[int, bytes] = {}
    order: dict[int, int] = {}  # id -> position in the sent trace
    flow_pos: dict[int, int] = {}  # id -> position within its flow
    flow_count: dict[bytes, int] = {}
    for i, f in enumerate(frames(sent)):
        pid = packet_id(f)
        if pid is None:
            continue
        key = flow_key(f)
        flow_of[pid], order[pid] = key, i
        flow_pos[pid] = flow_count.get(key, 0)
        flow_count[key] = flow_pos[pid] + 1
    per_flow: dict[bytes, list[int]] = {}
    stream: list[int] = []
    for f in frames(received):
        pid = packet_id(f)
        if pid is None or pid not in order:
            continue
        per_flow.setdefault(flow_of[pid], []).append(flow_pos[pid])
        stream.append(order[pid])
    return reordering(list(per_flow.values())), reordering([stream])
