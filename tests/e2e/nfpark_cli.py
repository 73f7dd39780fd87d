"""Helpers for the end-to-end tests: run `nfpark` as a user would, and read its pcaps.

Everything here goes through the `nfpark` binary (subprocess) or reads the files it writes; no
project code is imported. The pcap reader and the frame parser are deliberately tiny and
independent of the C++ implementation, so that they can catch its mistakes.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"  # captures the tests own (tests/data/README.md)
SHARED_TRACES = DATA  # its former name, kept for older tests
REAL_TRACES = ("tcpreplay_test.pcap", "slips_test7-malicious.pcap")
# Every capture in tests/data (Ethernet, Linux cooked, BSD loopback, raw IP; see its README).
# Left out, each tested where it belongs: ipv6-rthdr-oobr.pcap (one 59 B record of 262,158 B on
# the wire, run padded by test_frames.py: the matrix checks the largest wire length, the edge
# trace's 65,589 B), isakmp-various-oobr.pcap (262,144 B frames whose clock goes back 2.7 years:
# the simulator's gap test) and pcap-invalid-version-1.pcap (a version nfpark refuses).
NOT_IN_MATRIX = ("ipv6-rthdr-oobr.pcap", "isakmp-various-oobr.pcap", "pcap-invalid-version-1.pcap")
DATA_TRACES = tuple(sorted(p.name for p in DATA.glob("*.pcap") if p.name not in NOT_IN_MATRIX))
# The captures of other link types, converted to Ethernet on read.
OTHER_LINK_TRACES = ("mptcp-v1.pcap", "dns-badcookie.pcap", "bgp-addpath.pcap", "babel_rtt.pcap")

# Every mode and variant, as name -> (mode, extra flags) for Lab.batch.
MODE_SPECS: dict[str, tuple[str, tuple[str, ...]]] = {
    "baseline": ("baseline", ()),
    "payloadpark": ("payloadpark", ()),
    "payloadpark-352": ("payloadpark", ("--park-bytes", "352")),
    "payloadpark-all": ("payloadpark", ("--park-bytes", "all")),
    "queuemem": ("queuemem", ()),
    "nfslicer": ("nfslicer", ()),
    "nicmem": ("nicmem", ()),
    "split": ("split", ()),
}

# Every mode that parks something, and the one that parks nothing.
PARK_MODES = ("payloadpark", "nfslicer", "nicmem", "split")
MULTISET_MODES = ("queuemem",)  # outputs equal as a multiset of frames, not in order
ALL_PARK_MODES = (*PARK_MODES, *MULTISET_MODES)

RUN_TIMEOUT_S = 120

Json = dict[str, Any]


def nfpark_bin() -> Path:
    """The binary under test: $NFPARK_BIN, else <repo>/build/nfpark."""
    env = os.environ.get("NFPARK_BIN")
    return Path(env) if env else REPO / "build" / "nfpark"


def nfpark(*args: str | os.PathLike[str], timeout: float = RUN_TIMEOUT_S,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs `nfpark ARGS` and returns the finished process (never raises on a nonzero exit)."""
    cmd = [str(nfpark_bin()), *(str(a) for a in args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or REPO, check=False)


def describe(p: subprocess.CompletedProcess[str]) -> str:
    """One block for assertion messages: the command, its exit code and its output."""
    cmd = " ".join(str(a) for a in p.args)
    return f"$ {cmd}\nexit {p.returncode}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}"


def one_line_error(p: subprocess.CompletedProcess[str], *names: str) -> str:
    """Asserts exit 2, nothing on stdout and one stderr line naming every one of `names`."""
    assert p.returncode == 2, describe(p)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one error line:\n{describe(p)}"
    for n in names:
        assert n in lines[0], f"error line does not name {n!r}: {lines[0]!r}"
    assert p.stdout == "", describe(p)
    return lines[0]


def ok(*args: str | os.PathLike[str], timeout: float = RUN_TIMEOUT_S) -> str:
    """Runs nfpark, asserts exit 0, returns stdout."""
    p = nfpark(*args, timeout=timeout)
    assert p.returncode == 0, describe(p)
    return p.stdout


def gen(out: Path, packets: int = 2000, **opts: str | int | float | bool) -> Path:
    """`nfpark trace gen --out OUT --packets N --opt value ...`; True adds a bare flag."""
    args: list[str] = ["trace", "gen", "--out", str(out), "--packets", str(packets)]
    for key, value in opts.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not False:
            args += [flag, str(value)]
    ok(*args)
    assert out.is_file() and out.stat().st_size > 24
    return out


def edge_trace(out: Path, seed: int = 1, flows: int = 12, packets_per_flow: int = 8) -> Path:
    """`nfpark trace gen --kinds edge`: every frame kind (docs/traces.md "Edge trace")."""
    ok("trace", "gen", "--kinds", "edge", "--out", str(out), "--seed", str(seed),
       "--flows", str(flows), "--packets-per-flow", str(packets_per_flow))
    assert out.is_file() and out.stat().st_size > 24
    return out


def stats(path: Path) -> Json:
    """`nfpark trace stats PATH --json` as a dict."""
    out: Json = json.loads(ok("trace", "stats", str(path), "--json"))
    return out


def reorder(sent: Path, received: Path) -> Json:
    """`nfpark trace reorder SENT RECEIVED --json` as a dict."""
    out: Json = json.loads(ok("trace", "reorder", str(sent), str(received), "--json"))
    return out


def start_run(inp: Path, out: Path, mode: str = "baseline", chain: str = "nat,counter",
              *extra: str | os.PathLike[str],
              config: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`nfpark run [CONFIG] --mode M --chain C --in IN --out OUT --json ...`, not checked."""
    args: list[str | os.PathLike[str]] = ["run"]
    if config is not None:
        args.append(config)
    args += ["--mode", mode, "--chain", chain, "--in", inp, "--out", out, "--json",
             "--no-progress", *extra]
    return nfpark(*args)


@dataclass(frozen=True)
class TwoProcesses:
    switch: subprocess.CompletedProcess[str]  # the switch's finished `nfpark run`
    nf_rc: int
    nf_out: str
    nf_err: str


def two_processes(trace: Path, out: Path, sock: Path, switch_mode: str, nf_mode: str, chain: str,
                  switch_extra: Sequence[str] = (), nf_extra: Sequence[str] = ()) -> TwoProcesses:
    """The switch and the NF server as two processes over memif (docs/run.md "Separate
    processes"): `--role nf` serves on `sock` (a file, not DPDK's default abstract socket, so
    that its appearance can be waited for), `--role switch` replays `trace` through it to `out`;
    the NF ends at its idle exit. Neither is checked here."""
    nf = subprocess.Popen(
        [str(nfpark_bin()), "run", "--role", "nf", "--mode", nf_mode, "--chain", chain,
         "--port", f"vdev:net_memif0,role=server,socket={sock},socket-abstract=no",
         "--idle-exit", "2", "--json", "--timeout", "60", *nf_extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):  # the server creates its socket once EAL is up
            if sock.exists():
                break
            time.sleep(0.05)
        sw = nfpark("run", "--role", "switch", "--mode", switch_mode, "--in", trace, "--out", out,
                    "--nf-port", f"vdev:net_memif0,role=client,socket={sock},socket-abstract=no",
                    "--json", "--no-progress", "--timeout", "60", *switch_extra)
        nf_out, nf_err = nf.communicate(timeout=60)
    finally:
        if nf.poll() is None:
            nf.kill()
            nf.wait()
    return TwoProcesses(sw, nf.returncode, nf_out, nf_err)


def result(p: subprocess.CompletedProcess[str]) -> Json:
    """The JSON of a finished `nfpark run --json`; asserts exit 0."""
    assert p.returncode == 0, describe(p)
    res: Json = json.loads(p.stdout)
    return res


def run(inp: Path, out: Path, mode: str = "baseline", chain: str = "nat,counter",
        *extra: str | os.PathLike[str], config: Path | None = None) -> Json:
    """`nfpark run [CONFIG] --mode M --chain C --in IN --out OUT --json ...`; asserts exit 0."""
    return result(start_run(inp, out, mode, chain, *extra, config=config))


def assert_accounting(res: Json) -> None:
    """The run's own claims, and in + duplicates = out + Σ drops recomputed from its JSON."""
    assert res["balanced"] is True, res
    assert res["pools_full"] is True, res
    drops = res["drops"]
    # "nf": NF drops as they ended (freed by the NF, or notices that found their payload); a
    # notice lost, duplicated or corrupted on the way back is counted under a switch reason.
    if not any(res.get("faults", {}).values()):
        assert drops.get("nf", 0) == res["nf_drops"], res
    lhs = res["packets_in"] + res.get("duplicates", 0)
    rhs = res["packets_out"] + sum(int(v) for v in drops.values())
    assert lhs == rhs, f"in + dup = {lhs} but out + drops = {rhs}: {res}"


# ---------------------------------------------------------------------------------------------
# pcap reading


@dataclass(frozen=True)
class Frame:
    ts_ns: int
    data: bytes
    wire_len: int


def read_pcap(path: Path) -> list[Frame]:
    """Reads a classic Ethernet pcap (either byte order, µs or ns timestamps)."""
    linktype, frames = read_pcap_any(path)
    assert linktype == 1, f"{path}: link type {linktype}"
    return frames


def read_pcap_any(path: Path) -> tuple[int, list[Frame]]:
    """A classic pcap of any link type: (link type, frames)."""
    raw = path.read_bytes()
    assert len(raw) >= 24, f"{path}: too short for a pcap header"
    magic_le = struct.unpack_from("<I", raw, 0)[0]
    kinds = {0xA1B2C3D4: ("<", 1000), 0xA1B23C4D: ("<", 1),
             0xD4C3B2A1: (">", 1000), 0x4D3CB2A1: (">", 1)}
    assert magic_le in kinds, f"{path}: not a classic pcap (magic {magic_le:#x})"
    endian, mult = kinds[magic_le]
    linktype = int(struct.unpack_from(endian + "I", raw, 20)[0])
    frames: list[Frame] = []
    off = 24
    while off < len(raw):
        assert off + 16 <= len(raw), f"{path}: truncated record header at {off}"
        sec, frac, caplen, wirelen = struct.unpack_from(endian + "IIII", raw, off)
        off += 16
        assert off + caplen <= len(raw), f"{path}: truncated record at {off}"
        frames.append(Frame(sec * 1_000_000_000 + frac * mult, raw[off:off + caplen], wirelen))
        off += caplen
    return linktype, frames


def write_pcap(path: Path, frames: Iterable[Frame]) -> Path:
    """Writes a classic nanosecond Ethernet pcap (snaplen 262144)."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1))
    for f in frames:
        out += struct.pack("<IIII", f.ts_ns // 1_000_000_000, f.ts_ns % 1_000_000_000,
                           len(f.data), f.wire_len)
        out += f.data
    path.write_bytes(bytes(out))
    return path


def pcapng_of(dst: Path, sources: Sequence[Path], gap_ns: int | None = None) -> Path:
    """One pcapng holding `sources` (classic pcaps of any link type), one interface each, their
    records in the order given. Timestamps as stored (they may jump back and forth between
    sources), or with `gap_ns`, each source shifted to start `gap_ns` after the previous one's
    last record (as `mergecap -a` and a retime would)."""
    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return struct.pack("<II", kind, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    epbs = b""
    end_ns = 0
    for i, src in enumerate(sources):
        link, frames = read_pcap_any(src)
        # microsecond resolution; the link type without the FCS bits of a pcap's field
        out += block(1, struct.pack("<HHI", link & 0xFFFF, 0, 262144))
        shift = 0 if gap_ns is None or not frames else end_ns + gap_ns - frames[0].ts_ns
        for f in frames:
            end_ns = max(end_ns, f.ts_ns + shift)
            us = (f.ts_ns + shift) // 1000
            epbs += block(6, struct.pack("<IIIII", i, us >> 32, us & 0xFFFFFFFF, len(f.data),
                                         f.wire_len) + f.data)
    dst.write_bytes(out + epbs)
    return dst


def tshark_lengths(path: Path) -> list[tuple[int, int]]:
    """(frame.len, frame.cap_len) of every frame as tshark reads them (it must read the file)."""
    p = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "frame.len",
                        "-e", "frame.cap_len"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"tshark cannot read {path}: {p.stderr}"
    rows = [line.split("\t") for line in p.stdout.splitlines() if line]
    return [(int(a), int(b)) for a, b in rows]


def frame_bytes(path: Path) -> list[bytes]:
    return [f.data for f in read_pcap(path)]


def first_difference(a: Sequence[bytes], b: Sequence[bytes]) -> str:
    """Short human description of where two packet lists differ ('' when equal)."""
    if list(a) == list(b):
        return ""
    head = f"{len(a)} vs {len(b)} packets" if len(a) != len(b) else f"{len(a)} packets each"
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            at = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            return f"{head}; first difference at packet {i} (0-based), byte {at}, " \
                   f"lengths {len(x)}/{len(y)}"
    return head


def assert_same_pcap(expected: Path, actual: Path) -> None:
    a, b = frame_bytes(expected), frame_bytes(actual)
    assert len(a) > 0, f"{expected}: no packets"
    diff = first_difference(a, b)
    assert not diff, f"{actual} differs from {expected}: {diff}"


def assert_same_multiset(expected: Path, actual: Path) -> None:
    a, b = sorted(frame_bytes(expected)), sorted(frame_bytes(actual))
    assert len(a) > 0, f"{expected}: no packets"
    missing = len(set(a) - set(b))
    extra = len(set(b) - set(a))
    assert a == b, (f"{actual} is not a permutation of {expected}: {len(a)} vs {len(b)} "
                    f"packets, {missing} distinct frames missing, {extra} unexpected")


# ---------------------------------------------------------------------------------------------
# frame parsing (Ethernet, up to two VLAN tags, IPv4/IPv6 without extension headers, TCP/UDP)

MAGIC = b"NFPK"


@dataclass(frozen=True)
class Parsed:
    ipv: int               # 4 or 6
    proto: int             # 6 TCP, 17 UDP
    l3_off: int
    payload_off: int
    ip_end: int            # end of the IP packet in the frame (total/payload length)
    header_id: int         # IPv4 identification or IPv6 flow label
    flow: tuple[bytes, bytes, int, int, int]  # src, dst, sport, dport, proto

    @property
    def header_id_bits(self) -> int:
        return 16 if self.ipv == 4 else 20


def parse(frame: bytes) -> Parsed | None:
    """Parses an Ethernet frame down to its L4 payload; None for anything else."""
    off = 12
    ethertype = struct.unpack_from("!H", frame, off)[0]
    off += 2
    for _ in range(2):
        if ethertype in (0x8100, 0x88A8) and len(frame) >= off + 4:
            ethertype = struct.unpack_from("!H", frame, off + 2)[0]
            off += 4
    l3 = off
    if ethertype == 0x0800 and len(frame) >= l3 + 20:
        ihl = (frame[l3] & 0x0F) * 4
        total = struct.unpack_from("!H", frame, l3 + 2)[0]
        hid = struct.unpack_from("!H", frame, l3 + 4)[0]
        proto = frame[l3 + 9]
        src, dst = frame[l3 + 12:l3 + 16], frame[l3 + 16:l3 + 20]
        l4, ipv, ip_end = l3 + ihl, 4, l3 + total
    elif ethertype == 0x86DD and len(frame) >= l3 + 40:
        hid = struct.unpack_from("!I", frame, l3)[0] & 0xFFFFF
        plen = struct.unpack_from("!H", frame, l3 + 4)[0]
        proto = frame[l3 + 6]
        src, dst = frame[l3 + 8:l3 + 24], frame[l3 + 24:l3 + 40]
        l4, ipv, ip_end = l3 + 40, 6, l3 + 40 + plen
    else:
        return None
    if proto == 17 and len(frame) >= l4 + 8:
        pay = l4 + 8
    elif proto == 6 and len(frame) >= l4 + 20:
        pay = l4 + (frame[l4 + 12] >> 4) * 4
    else:
        return None
    sport, dport = struct.unpack_from("!HH", frame, l4)
    return Parsed(ipv, proto, l3, pay, ip_end, hid, (src, dst, sport, dport, proto))


def payload_id(frame: bytes) -> tuple[Parsed, int] | None:
    """The generator's id from the head of the L4 payload (None if the frame carries none)."""
    p = parse(frame)
    if p is None:
        return None
    head = frame[p.payload_off:p.payload_off + 12]
    if len(head) < 12 or head[:4] != MAGIC:
        return None
    return p, struct.unpack("!Q", head[4:12])[0]


def assert_own_payloads(out_frames: Iterable[bytes], in_frames: Sequence[bytes]) -> int:
    """Every output frame that carries an id has the header of that packet and exactly its
    payload: the IPv4 id / IPv6 flow label matches the payload id's low bits, the id names an
    input packet, the L4 payload equals that packet's byte for byte and the frame has its length.
    Returns how many frames were checked."""
    inputs: dict[int, bytes] = {}
    for f in in_frames:
        got = payload_id(f)
        if got is not None:
            inputs[got[1]] = f
    assert inputs, "the input carries no packet ids"
    checked = 0
    for i, f in enumerate(out_frames):
        got = payload_id(f)
        assert got is not None, f"output packet {i} lost its id/payload: {f[:80].hex()}"
        p, pid = got
        mask = (1 << p.header_id_bits) - 1
        assert p.header_id == pid & mask, (
            f"output packet {i}: payload of packet {pid} on the header of a packet with "
            f"id bits {p.header_id:#x} (expected {pid & mask:#x})")
        assert pid in inputs, f"output packet {i}: id {pid} was never sent"
        orig = inputs[pid]
        po = parse(orig)
        assert po is not None
        assert len(f) == len(orig), f"output packet {i} (id {pid}): {len(f)} B, sent {len(orig)} B"
        assert f[p.payload_off:p.ip_end] == orig[po.payload_off:po.ip_end], (
            f"output packet {i} (id {pid}): payload bytes differ from the packet sent")
        checked += 1
    return checked
