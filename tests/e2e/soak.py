"""Soak: every parking mode under all faults at once, with crafted traffic-side frames.

Each run replays a generated trace (every packet carries its id) into which crafted frames are
interleaved — DSCP 63, IP length above the frame, payloads that start with a valid-looking nfpark
tag, PayloadPark tag, NFSlicer escape token or the token the k-th sliced packet had under the old
unkeyed generation scrambler (the issue 14 attack; generations are keyed since, so these are
guesses that must never be spliced) — through
`nfpark run` with every NF fault on: drops, delays past the slot lifetime (small stores),
duplicates, reordering, corrupted and forged tags. Throughout the run its anonymous memory is
sampled; afterwards:
  - no foreign payload: every frame that left is exactly one frame that was sent — its id (in the
    payload) names it, its header carries that id's low bits (IPv4 identification), its length
    and L4 payload are those sent;
  - in + duplicates = out + Σ drops, pools full, nothing held at exit;
  - every fault happened;
  - bounded memory: the peak anonymous RSS does not grow with the number of packets (against the
    same run on a trace 8x shorter).

`python -m tests.e2e.soak --minutes 10` (scripts/soak.sh) repeats this with larger traces and new
seeds until the time is up; tests/e2e/test_soak.py is the short form in the test command.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import nfpark_cli as cli

M64 = (1 << 64) - 1
CRAFTED_BASE = 1 << 40  # ids of crafted frames (generated ones are 0..N-1)
CRAFTED_MAGIC = b"NFPC"

# name -> nfpark run flags. A fifth of the packets is delayed past its slot's lifetime: 300 µs is
# ~400 packets at the trace's 10 Gbit/s, more than PayloadPark's 256 slots hold; 5 ms is more
# than NFSlicer's 4096 entries (ttl 1) hold; QUEUE-MEM's batches stall and are recovered.
FAULTS = ("--nf-drop", "0.02", "--nf-dup", "0.02", "--nf-reorder", "0.1",
          "--nf-corrupt-tag", "0.02", "--nf-forge-tag", "0.02", "--nf-delay-share", "0.2")
KEY = "00112233445566778899aabbccddeeff"
# With --nf-lcore the switch runs ahead of the NF server by up to a ring (4096 packets), so
# PayloadPark gets 4096 slots there (with 256 nearly every payload would be evicted).
MODES: dict[str, tuple[str, ...]] = {
    "payloadpark": ("--mode", "payloadpark", "--tag-key", KEY, "--nf-delay-us", "300"),
    "payloadpark-7B": ("--mode", "payloadpark", "--tag-format", "payloadpark",
                       "--nf-delay-us", "300"),
    "queuemem": ("--mode", "queuemem", "--nf-delay-us", "300"),
    "nfslicer": ("--mode", "nfslicer", "--nf-delay-us", "5000"),
}
SLICER_TOML = "[nfslicer]\nttl = 1\n"  # entries 4096 (default): tokens predictable below 4096
CHAIN = "nat,counter"


# ---------------------------------------------------------------------------------------------
# crafted frames


def _csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def crafted_frame(cid: int, lookalike: bytes, dscp: int = 0, ip_len: int | None = None,
                  udp: bool = True, size: int = 200) -> bytes:
    """An IPv4 UDP/TCP frame of `size` bytes whose L4 payload is `lookalike` + NFPC + id. Its IP
    length field says `ip_len` (default: the frame's). IPv4 identification = the id's low bits."""
    flow = cid % 64
    payload_head = lookalike + CRAFTED_MAGIC + struct.pack("!Q", cid)
    if udp:
        l4 = struct.pack("!HHHH", 20000 + flow, 9, 0, 0)
    else:
        l4 = struct.pack("!HHIIBBHHH", 20000 + flow, 9, 1, 0, 0x50, 0x18, 65535, 0, 0)
    hdr_len = 14 + 20 + len(l4)
    payload = payload_head + bytes((cid + i) % 251 for i in range(size - hdr_len
                                                                    - len(payload_head)))
    total = ip_len if ip_len is not None else 20 + len(l4) + len(payload)
    if udp:
        l4 = l4[:4] + struct.pack("!H", total - 20) + l4[6:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2, total, cid & 0xFFFF, 0, 64,
                     17 if udp else 6, 0, bytes([10, 9, flow >> 8, flow & 0xFF]),
                     bytes([10, 8, 0, 1]))
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    return bytes.fromhex("020000000002020000000009") + b"\x08\x00" + ip + l4 + payload


def nfpark_tag_lookalike(index: int, generation: int) -> bytes:
    """An nfpark tag (24 bytes) that the unkeyed format accepts: parked, CRC-32C right."""
    body = bytes([0x4E, 0x11, 0, 0]) + struct.pack("!IIHH", index, generation, 1400, 1300)
    return body + struct.pack("!Q", _crc32c(body))


def payloadpark_tag_lookalike(index: int, generation: int) -> bytes:
    """A PayloadPark 7-byte tag with a right checksum."""
    s = 0x8000 + index + generation
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return bytes([0x80]) + struct.pack("!HHH", ~s & 0xFFFF, index, generation)


def mix64(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


class Scrambler:
    """NFSlicer's generation scrambler (park/slicer_token.cc), to predict tokens."""

    def __init__(self, bits: int, key: int) -> None:
        g = 0x9E3779B97F4A7C15
        self.bits, self.mask = bits, (1 << bits) - 1
        self.k0, self.k1 = mix64(key ^ 0x6E66736C69636572), mix64((key + g) & M64)
        self.m0, self.m1 = mix64((key + 2 * g) & M64) | 1, mix64((key + 3 * g) & M64) | 1

    def __call__(self, x: int) -> int:
        s, m = max(1, self.bits // 2), self.mask
        x = (x ^ self.k0) & m
        x = (x * self.m0) & m
        x ^= x >> s
        x = (x + self.k1) & m
        x = (x * self.m1) & m
        return x ^ (x >> s)


def predicted_token(k: int, index_bits: int = 12, seed: int = 0) -> bytes:
    """The token of the k-th packet NFSlicer slices (k from 0, before its ring wraps)."""
    gen = Scrambler(64 - 8 - index_bits, mix64(seed))(k + 1)
    return struct.pack("!Q", gen << index_bits | (k % (1 << index_bits)))


# ---------------------------------------------------------------------------------------------
# traces


@dataclass
class Sent:
    """What a frame of the trace must look like when it leaves (frames keyed by id)."""

    frames: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # id -> len, ipid, crc
    crafted: int = 0


def _records(path: Path) -> Iterator[tuple[bytes, bytes]]:
    raw = path.read_bytes()
    assert struct.unpack_from("<I", raw)[0] in (0xA1B2C3D4, 0xA1B23C4D), path
    off = 24
    while off < len(raw):
        hdr = raw[off:off + 16]
        caplen = struct.unpack_from("<I", hdr, 8)[0]
        yield hdr, raw[off + 16:off + 16 + caplen]
        off += 16 + caplen


def _payload_region(frame: bytes) -> tuple[int, int, int] | None:
    """(id, IPv4 id / IPv6 label bits, crc of the L4 payload) of a frame, or None."""
    p = cli.parse(frame)
    if p is None:
        return None
    head = frame[p.payload_off:p.payload_off + 48]
    if head[:4] == cli.MAGIC and len(head) >= 12:
        pid = struct.unpack("!Q", head[4:12])[0]
    else:
        at = head.find(CRAFTED_MAGIC)
        if at < 0 or len(head) < at + 12:
            return None
        pid = struct.unpack("!Q", head[at + 4:at + 12])[0]
    end = min(p.ip_end, len(frame))
    return pid, p.header_id & ((1 << p.header_id_bits) - 1), zlib.crc32(frame[p.payload_off:end])


def _sliceable(frame: bytes) -> bool:
    p = cli.parse(frame)
    return p is not None and len(frame) > 500


def build_trace(root: Path, packets: int, seed: int, every: int = 40) -> tuple[Path, Sent]:
    """A generated trace with a crafted frame after every `every` packets; what must leave."""
    base = cli.gen(root / f"base-{packets}-{seed}.pcap", packets, flows=max(50, packets // 100),
                   size="dc", proto="mix", seed=seed)
    out = root / f"soak-{packets}-{seed}.pcap"
    sent = Sent()
    sliced = 0
    with out.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1))
        for n, (hdr, frame) in enumerate(_records(base)):
            f.write(hdr + frame)
            sliced += _sliceable(frame)
            if n % every != every - 1:
                continue
            cid = CRAFTED_BASE + sent.crafted
            sent.crafted += 1
            kind = sent.crafted % 6
            if kind == 0:  # NFSlicer's token of a recent victim, in a frame cut short
                look = predicted_token(max(0, sliced - 1 - cid % 8))
                c = crafted_frame(cid, look, ip_len=1400, size=120)
            elif kind == 1:
                c = crafted_frame(cid, nfpark_tag_lookalike(cid % 256, cid % 300), udp=False)
            elif kind == 2:
                c = crafted_frame(cid, payloadpark_tag_lookalike(cid % 256, cid % 300))
            elif kind == 3:
                c = crafted_frame(cid, struct.pack("!Q", 0xFF4E465345534350))  # escape token
            elif kind == 4:
                c = crafted_frame(cid, b"", dscp=63, size=300)
            else:
                c = crafted_frame(cid, b"", ip_len=1000, size=90, udp=False)
            f.write(hdr[:8] + struct.pack("<II", len(c), len(c)) + c)
    for _, frame in _records(out):
        got = _payload_region(frame)
        assert got is not None, "every frame of the soak trace carries an id"
        sent.frames[got[0]] = (len(frame), got[1], got[2])
    return out, sent


# ---------------------------------------------------------------------------------------------
# runs


@dataclass
class Run:
    result: cli.Json
    peak_anon_kb: int
    out: Path


def rss_anon_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(trace: Path, out: Path, mode: str, lcore: bool, seed: int, config: Path) -> Run:
    """`nfpark run` with every fault on, sampling its anonymous memory while it runs."""
    args = [str(cli.nfpark_bin()), "run", str(config), *MODES[mode], "--chain", CHAIN,
            "--in", str(trace), "--out", str(out), "--json", "--no-progress", *FAULTS,
            "--seed", str(seed)]
    if mode.startswith("payloadpark"):
        args += ["--slots", "4096" if lcore else "256"]
    if lcore:
        args.append("--nf-lcore")
    peak = 0
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=cli.REPO) as p:
        deadline = time.monotonic() + cli.RUN_TIMEOUT_S
        while p.poll() is None:
            peak = max(peak, rss_anon_kb(p.pid))
            if time.monotonic() > deadline:
                p.kill()
            time.sleep(0.02)
        stdout, stderr = p.communicate()
    done = subprocess.CompletedProcess(args, p.returncode, stdout, stderr)
    return Run(cli.result(done), peak, out)


def check(r: Run, sent: Sent, mode: str) -> None:
    """The soak's assertions on one finished run (see the module doc)."""
    res = r.result
    cli.assert_accounting(res)
    assert res["held_at_exit"] == 0, res
    f = res["faults"]
    for k in ("dropped", "duplicated", "reordered", "corrupted", "forged", "delayed"):
        assert f.get(k, 0) > 0, f"{mode}: no {k} fault happened: {f}"
    n = 0
    for _, frame in _records(r.out):
        got = _payload_region(frame)
        assert got is not None, f"{mode}: output packet {n} lost its id: {frame[:64].hex()}"
        pid, hid, crc = got
        assert pid in sent.frames, f"{mode}: output packet {n}: id {pid} was never sent"
        length, want_hid, want_crc = sent.frames[pid]
        assert hid == want_hid, (f"{mode}: output packet {n}: the payload of packet {pid} "
                                 f"under the header of another (id bits {hid:#x}, "
                                 f"expected {want_hid:#x})")
        assert len(frame) == length and crc == want_crc, (
            f"{mode}: output packet {n} (id {pid}): {len(frame)} B, sent {length} B, "
            f"payload {'same' if crc == want_crc else 'differs'}")
        n += 1
    assert n == res["packets_out"], f"{mode}: {n} frames in the output, {res['packets_out']} out"


_traces: dict[tuple[Path, int, int], tuple[Path, Sent]] = {}


def trace_for(root: Path, packets: int, seed: int) -> tuple[Path, Sent]:
    """build_trace, once per (root, packets, seed) in this process."""
    key = (root, packets, seed)
    if key not in _traces:
        _traces[key] = build_trace(root, packets, seed)
    return _traces[key]


def soak_one(root: Path, mode: str, lcore: bool, packets: int, seed: int) -> tuple[Run, Run]:
    """A run on `packets` packets and one on packets/8 (the memory reference), both checked."""
    config = root / "soak.toml"
    config.write_text(SLICER_TOML)
    runs = []
    for n in (max(packets // 8, 2000), packets):
        trace, sent = trace_for(root, n, seed)
        tag = f"{mode}-{'lcore' if lcore else 'inline'}-{n}-{seed}"
        r = run(trace, root / f"out-{tag}.pcap", mode, lcore, seed, config)
        check(r, sent, tag)
        r.out.unlink()
        runs.append(r)
    small, big = runs
    # Bounded memory: a leak of >= 16 MB over 7/8 of the packets shows here.
    assert big.peak_anon_kb <= small.peak_anon_kb + 16 * 1024, (
        f"{mode}: peak anonymous memory {big.peak_anon_kb} kB over {packets} packets, "
        f"{small.peak_anon_kb} kB over {packets // 8}")
    return small, big


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--packets", type=int, default=200_000, help="per run (dc sizes)")
    ap.add_argument("--modes", default=",".join(MODES))
    args = ap.parse_args()
    stop = time.monotonic() + args.minutes * 60
    total = runs = 0
    seed = 1
    with tempfile.TemporaryDirectory(prefix="nfpark-soak-") as tmp:
        root = Path(tmp)
        while time.monotonic() < stop:
            for mode in args.modes.split(","):
                for lcore in (False, True):
                    small, big = soak_one(root, mode, lcore, args.packets, seed)
                    runs += 2
                    total += small.result["packets_in"] + big.result["packets_in"]
                    print(json.dumps({"mode": mode, "nf_lcore": lcore, "seed": seed,
                                      "packets": big.result["packets_in"],
                                      "drops": big.result["drops"],
                                      "faults": big.result["faults"],
                                      "peak_anon_kb": [small.peak_anon_kb, big.peak_anon_kb]}),
                          flush=True)
            for p in root.glob("*.pcap"):
                p.unlink()
            _traces.clear()
            seed += 1
    print(f"soak: {runs} runs, {total} packets, every check passed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
