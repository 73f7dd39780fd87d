"""Captures of any shape with --out (issue 13, "frames").

Truncated records keep their wire lengths (or are padded to them), an output pcap tshark reads
with those lengths; a link type nfpark cannot read is one clear error. (Every mode on GRO-size
and jumbo frames, truncated records and other link types: test_traffic_matrix.py.)
The switch and the NF server in two processes (memif) move
the same frames; there the wire length of whole packets does not travel (docs/traces.md).
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"


def _edge(lab: Lab) -> Path:
    path = lab.root / "edge.pcap"
    if not path.exists():
        cli.edge_trace(path)
    return path


def test_truncated_capture_keeps_wire_lengths_or_is_padded(lab: Lab, tmp_path: Path) -> None:
    """msnlb.pcap (snaplen 96, two 1510 B frames) and the edge trace's truncated records."""
    trace = tmp_path / "trunc.pcap"
    edge = [f for f in cli.read_pcap(_edge(lab)) if f.wire_len > len(f.data)]
    msnlb = cli.read_pcap(cli.DATA / "msnlb.pcap")
    assert len(edge) == 4 and [f.wire_len for f in msnlb] == [1510, 1510]
    cli.write_pcap(trace, [*msnlb, *edge])
    wire = [f.wire_len for f in cli.read_pcap(trace)]
    for mode in ("baseline", "payloadpark", "nicmem"):
        out = tmp_path / f"{mode}.pcap"
        res = cli.run(trace, out, mode, CHAIN)
        cli.assert_accounting(res)
        assert [w for w, _ in cli.tshark_lengths(out)] == wire
        assert [f.data for f in cli.read_pcap(out)][:2] == [f.data for f in msnlb]
    # --pad: every record at its wire length, L4 checksums recomputed where the headers were whole.
    padded = tmp_path / "padded.pcap"
    res = cli.run(trace, padded, "payloadpark", "forward", "--pad")
    cli.assert_accounting(res)
    assert res["ports"]["replay.padded"] == 6
    assert cli.tshark_lengths(padded) == [(w, w) for w in wire]
    # `nfpark trace pad` writes the same frames.
    offline = tmp_path / "offline.pcap"
    cli.ok("trace", "pad", str(trace), str(offline))
    assert cli.frame_bytes(offline) == cli.frame_bytes(padded)
    # The padded TCP record (edge: IPv4 TCP cut at 64 of 1514 B) has a valid TCP checksum.
    p = subprocess.run(["tshark", "-r", str(offline), "-o", "tcp.check_checksum:TRUE", "-Y",
                        "tcp.checksum.status == \"Bad\""], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout == "", p.stdout


def _ipv6_dest_opts_frame(ext_bytes: int, payload: int) -> bytes:
    """Ethernet + IPv6 + destination options of `ext_bytes` (PadN) + UDP with `payload` bytes."""
    ext = bytearray(ext_bytes)
    ext[0], ext[1] = 17, ext_bytes // 8 - 1
    pad, at = ext_bytes - 2, 2
    while pad:  # PadN options of at most 257 B each
        n = min(pad, 257)
        ext[at], ext[at + 1] = 1, n - 2
        at, pad = at + n, pad - n
    udp = struct.pack("!HHHH", 1000, 2000, 8 + payload, 0) + b"x" * payload
    ip = struct.pack("!IHBB", 0x60000000, ext_bytes + len(udp), 60, 64) + \
        bytes(15) + b"\x01" + bytes(15) + b"\x02"
    return bytes(5) + b"\x02" + bytes(5) + b"\x01" + b"\x86\xdd" + ip + bytes(ext) + udp


def test_headers_longer_than_a_header_segment_go_whole(tmp_path: Path) -> None:
    """IPv6 frames whose L2-L4 headers exceed nicmem's and split's 256 B header segment: a
    566 B frame with 304 B of destination options, and tcpdump's ipv6-rthdr-oobr.pcap padded
    (raw IPv6, a 392 B routing header, L2-L4 446 B of 262,144 B). nicmem and split cut them past
    their header buffer and crashed; they now go as one segment, as baseline sends them.
    (The capture's microseconds, 808464432, are refused as corrupt: the test zeroes them.)"""
    raw = bytearray((cli.DATA / "ipv6-rthdr-oobr.pcap").read_bytes())
    assert struct.unpack_from("<II", raw, 0) == (0xA1B2C3D4, 0x00040002)
    struct.pack_into("<I", raw, 24 + 4, 0)
    rthdr = tmp_path / "ipv6-rthdr.pcap"
    rthdr.write_bytes(bytes(raw))
    opts = tmp_path / "dest-opts.pcap"
    frame = _ipv6_dest_opts_frame(304, 200)
    cli.write_pcap(opts, [cli.Frame(10**9, frame, len(frame))])
    for trace, extra in ((opts, ()), (rthdr, ("--pad",))):
        base = tmp_path / "baseline.pcap"
        cli.assert_accounting(cli.run(trace, base, "baseline", CHAIN, *extra))
        for mode in ("nicmem", "split"):
            out = tmp_path / f"{mode}.pcap"
            res = cli.run(trace, out, mode, CHAIN, *extra)
            cli.assert_accounting(res)
            assert res["packets_out"] == 1, res
            cli.assert_same_pcap(base, out)


def test_an_unsupported_link_type_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "wifi.pcap"
    bad.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 127))
    p = cli.start_run(bad, tmp_path / "out.pcap", "baseline")
    assert p.returncode == 2, cli.describe(p)
    line = cli.one_line_error(p, "wifi.pcap", "IEEE802_11_RADIOTAP", "tcprewrite --dlt=enet")
    assert "not supported" in line


def test_two_processes_move_gro_frames_and_say_what_loses_its_wire_length(
        tmp_path: Path) -> None:
    """--role switch / --role nf over memif: frames to 65589 B cross the link (multi-segment
    memif descriptors). The wire length is an mbuf field of the switch process: a parked packet
    leaves as its own original (wire length kept), a whole one comes back as a copy (its
    output record says captured length = wire length)."""
    trace = tmp_path / "t.pcap"
    edge = cli.read_pcap(cli.edge_trace(tmp_path / "edge.pcap"))
    # A record cut at 1514 of a 9014 B frame: enough payload captured to be parked.
    jumbo = next(f for f in edge if len(f.data) == 9014 and cli.parse(f.data) is not None
                 and cli.parse(f.data).ipv == 4)  # type: ignore[union-attr]
    cut = cli.Frame(jumbo.ts_ns, jumbo.data[:1514], 9014)
    cli.write_pcap(trace, [*edge, cut])
    base = tmp_path / "base.pcap"
    # The NF process counts its own drops: a chain that drops nothing keeps the switch balanced.
    chain = "counter"
    base_res = cli.run(trace, base, "payloadpark", chain)
    cli.assert_accounting(base_res)
    out = tmp_path / "out.pcap"
    two = cli.two_processes(trace, out, tmp_path / "nf.sock", "payloadpark", "payloadpark", chain)
    assert two.nf_rc == 0, f"nf role exit {two.nf_rc}\n{two.nf_err[-2000:]}"
    res = cli.result(two.switch)
    cli.assert_accounting(res)
    assert res["drops"].get("frame_too_long", 0) == 0
    got, want = cli.read_pcap(out), cli.read_pcap(base)
    assert sorted(f.data for f in got) == sorted(f.data for f in want)
    assert max(len(f.data) for f in got) == 65589
    wire = {f.data: f.wire_len for f in want}
    truncated = {f.data: f.wire_len for f in got if wire[f.data] > len(f.data)}
    assert len(truncated) == 5, "the trace has five truncated records"
    for data, w in truncated.items():
        if len(data) == 1514:  # parked: left as its own original, wire length kept
            assert w == 9014, w
        else:  # whole (too little payload to park): came back as a copy, wire length lost
            assert w == len(data), w


@pytest.mark.parametrize("mode", ["payloadpark", "nicmem"])
def test_duplicated_and_reordered_chains_at_the_nf(lab: Lab, mode: str) -> None:
    """The fault injector duplicates (deep copies of multi-segment header packets and whole
    GRO frames) and reorders the edge trace at the NF: every frame that leaves is one baseline
    sends, duplicates and drops are counted, every mbuf comes back."""
    trace = _edge(lab)
    base, _ = lab.baseline(trace, "counter")
    out = lab.root / f"dup-{mode}.pcap"
    res = cli.run(trace, out, mode, "counter", "--nf-dup", "0.5", "--nf-reorder", "0.2")
    cli.assert_accounting(res)
    assert res["duplicates"] > 20, res
    sent = {(f.data, f.wire_len) for f in cli.read_pcap(base)}
    got = cli.read_pcap(out)
    assert all((f.data, f.wire_len) in sent for f in got)
    assert max(len(f.data) for f in got) == 65589
