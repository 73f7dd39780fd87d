"""Issue 14, safe files: an --out that is an input is refused, and a failed run never damages an
existing file (output goes to a temporary file, moved over --out only when the run has a
result). A pcap record with a microsecond field >= 10^6 is an error naming file and packet."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from . import nfpark_cli as cli
from .lab import Lab


def copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if ".nfpark-" in p.name)


def test_out_that_is_the_input_is_refused(lab: Lab, tmp_path: Path) -> None:
    x = copy(lab.trace(500, size="dc", seed=31), tmp_path / "x.pcap")
    before = x.read_bytes()
    (tmp_path / "link.pcap").symlink_to(x)
    os.link(x, tmp_path / "hard.pcap")
    for out in ("x.pcap", "link.pcap", "hard.pcap", "./sub/../x.pcap"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        p = cli.nfpark("run", "--in", x, "--out", tmp_path / out, "--no-progress")
        cli.one_line_error(p, "--out", "is the input")
        assert x.read_bytes() == before, f"--out {out} damaged the input"
    # The symlink's target as input, the link as --out, the other way round too.
    p = cli.nfpark("run", "--in", tmp_path / "link.pcap", "--out", x, "--no-progress")
    cli.one_line_error(p, "--out", "is the input")
    assert x.read_bytes() == before


def test_out_that_is_the_config_file_is_refused(lab: Lab, tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[run]\nin = "{lab.trace(300, seed=32)}"\nout = "c.toml"\n')
    cli.one_line_error(cli.nfpark("run", cfg), "is the config file")
    assert cfg.read_text().startswith("[run]")


def test_a_config_error_leaves_an_existing_output_alone(lab: Lab, tmp_path: Path) -> None:
    out = copy(lab.trace(300, seed=33), tmp_path / "out.pcap")
    before = out.read_bytes()
    p = cli.nfpark("run", "--in", lab.trace(300, seed=34), "--out", out, "--chain", "natt")
    cli.one_line_error(p, "natt")
    assert out.read_bytes() == before
    assert leftovers(tmp_path) == []


def corrupt_micros(src: Path, dst: Path, packet: int) -> Path:
    """A copy of microsecond pcap `src` whose record `packet` (1-based) has 1500000 us."""
    raw = bytearray(src.read_bytes())
    assert struct.unpack_from("<I", raw, 0)[0] == 0xA1B2C3D4, "expected a LE microsecond pcap"
    off = 24
    for _ in range(packet - 1):
        off += 16 + struct.unpack_from("<I", raw, off + 8)[0]
    struct.pack_into("<I", raw, off + 4, 1_500_000)
    dst.write_bytes(bytes(raw))
    return dst


def micro_trace(lab: Lab, tmp_path: Path) -> Path:
    """The lab's trace rewritten with microsecond timestamps (the generator writes ns)."""
    frames = cli.read_pcap(lab.trace(400, size="dc", seed=35))
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000, len(f.data),
                           f.wire_len) + f.data
    path = tmp_path / "micro.pcap"
    path.write_bytes(bytes(out))
    return path


def test_a_failed_run_leaves_an_existing_output_alone(lab: Lab, tmp_path: Path) -> None:
    """The input turns out corrupt half-way (record 200): exit 2, the old output untouched."""
    good = micro_trace(lab, tmp_path)
    bad = corrupt_micros(good, tmp_path / "bad.pcap", 200)
    out = copy(good, tmp_path / "out.pcap")
    before = out.read_bytes()
    p = cli.nfpark("run", "--mode", "payloadpark", "--in", bad, "--out", out, "--no-progress")
    line = cli.one_line_error(p, str(bad), "packet 200", "1500000")
    assert "10^6" in line, line
    assert out.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_good_run_replaces_the_output_and_leaves_no_temporary_file(lab: Lab,
                                                                     tmp_path: Path) -> None:
    good = micro_trace(lab, tmp_path)
    out = tmp_path / "out.pcap"
    out.write_bytes(b"old")
    res = cli.run(good, out, "payloadpark", "nat")
    assert len(cli.read_pcap(out)) == res["packets_out"] == 400
    assert leftovers(tmp_path) == []
