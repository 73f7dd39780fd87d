"""Drawing a Result (no dataplane needed) and RFC 4737 per flow from pcap packet ids."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from nfpark.repro.core import Panel, Result, Row, Series, flags
from nfpark.repro.pcapids import frames, per_flow_reordering, reordering
from nfpark.repro.plot import figure, save


def _result() -> Result:
    cat = Panel("bytes", "frame size [B]", "bytes per packet [B]", [
        Series("nfpark baseline", "nfpark", [256.0, "dc"], [256.0, 880.0], "bar"),
        Series("nfpark pp160", "nfpark", [256.0, "dc"], [103.0, 775.0], "bar"),
        Series("paper: 103 B", "paper", [256.0], [103.0], "points")])
    num = Panel("gain", "T_buff [µs]", "SLF", [
        Series("nfpark: SLF", "nfpark", [0.0, 16.0], [1.0, None]),
        Series("paper: 1.2 -> 1.9", "paper", [0.0, 16.0], [1.2, 1.9]),
        Series("paper range", "paper", [0.0, 16.0], [1.0, 1.0], "band", y_hi=[2.0, 2.0])],
        ref_lines=[(0.5, "paper bound")])
    return Result("demo", "Demo title", [cat, num], [Row("dc", "gain", "%", 13.0, 13.0)])


def test_figure_has_one_axes_per_panel_with_labels_and_legend() -> None:
    fig = figure(_result())
    assert len(fig.axes) == 2
    bars, line = fig.axes
    assert bars.get_xlabel() == "frame size [B]" and bars.get_ylabel() == "bytes per packet [B]"
    assert [t.get_text() for t in bars.get_xticklabels()] == ["256", "dc"]
    for ax in fig.axes:
        legend = ax.get_legend()
        assert legend is not None
        texts = [t.get_text() for t in legend.get_texts()]
        assert any(t.startswith("nfpark") for t in texts)
        assert any(t.startswith("paper") for t in texts)
    # a missing nfpark value is not drawn; the paper's line has both points
    lines = {ln.get_label(): ln for ln in line.get_lines()}
    assert list(lines["nfpark: SLF"].get_xdata()) == [0.0]  # type: ignore[arg-type]
    assert list(lines["paper: 1.2 -> 1.9"].get_ydata()) == [1.2, 1.9]  # type: ignore[arg-type]
    assert fig.get_suptitle() == "Demo title"


def test_failed_result_says_so_in_the_title(tmp_path: Path) -> None:
    res = _result()
    res.status, res.errors = "failed", ["nfpark is not built"]
    assert "nfpark failed: nfpark is not built" in figure(res).get_suptitle()
    data = save(res, tmp_path / "x.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_series_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        Series("x", "nfpark", [1.0, 2.0], [1.0])


def test_flags_spell_nfpark_options() -> None:
    assert flags({"park_bytes": 160, "pace": True, "out": None, "in_": "a.pcap",
                  "json": False}) == ["--park-bytes", "160", "--pace", "--in", "a.pcap"]


def test_rfc4737_examples() -> None:
    # docs/traces.md: sent 1 2 3 4 5, received 1 3 2 4 5 -> 20%, extent 1
    r = reordering([[0, 2, 1, 3, 4]])
    assert (r.reordered, r.extent_max, r.out_of_order_pct) == (1, 1, 20.0)
    # received 1 2 4 5 3 6 -> 3 has extent 2
    assert reordering([[0, 1, 3, 4, 2, 5]]).extent_max == 2
    # two late packets: 4 arrives first -> 1, 2, 3 all reordered, extents 1, 2, 3
    r = reordering([[3, 0, 1, 2]])
    assert (r.reordered, r.extent_max, r.extent_mean) == (3, 3, 2.0)


def _frame(flow: int, pid: int) -> bytes:
    eth = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00"
    payload = b"NFPK" + struct.pack(">Q", pid) + b"\x00" * 8
    ip = bytes([0x45, 0, 0, 20 + 8 + len(payload), 0, 0, 0, 0, 64, 17, 0, 0])
    ip += bytes([10, 0, 0, flow + 1, 192, 168, 0, 1])
    udp = struct.pack(">HHHH", 1000 + flow, 80, 8 + len(payload), 0)
    return eth + ip + udp + payload


def _pcap(path: Path, frames: list[bytes]) -> Path:
    out = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1)
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", 0, i, len(f), len(f)) + f
    path.write_bytes(out)
    return path


def test_per_flow_reordering_from_pcaps(tmp_path: Path) -> None:
    # flows A (ids 0, 2, 4) and B (ids 1, 3, 5), sent interleaved
    sent = [(0, 0), (1, 1), (0, 2), (1, 3), (0, 4), (1, 5)]
    # received: all of B, then A -> whole stream reordered, each flow in order
    recv = [(1, 1), (1, 3), (1, 5), (0, 0), (0, 2), (0, 4)]
    s = _pcap(tmp_path / "s.pcap", [_frame(f, i) for f, i in sent])
    r = _pcap(tmp_path / "r.pcap", [_frame(f, i) for f, i in recv])
    flow, stream = per_flow_reordering(s, r)
    assert (flow.matched, flow.reordered) == (6, 0)
    assert stream.reordered == 3 and stream.extent_max == 3
    # swap A's last two: one reordered packet in flow A, extent 1
    recv2 = [(0, 0), (1, 1), (0, 4), (1, 3), (0, 2), (1, 5)]
    flow, _ = per_flow_reordering(s, _pcap(tmp_path / "r2.pcap", [_frame(f, i) for f, i in recv2]))
    assert (flow.reordered, flow.extent_max) == (1, 1)


def test_not_a_pcap_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"\x0a\x0d\x0d\x0a" + b"\x00" * 40)
    with pytest.raises(ValueError, match="not a classic pcap"):
        per_flow_reordering(bad, bad)


DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def test_frames_refuse_other_link_types(tmp_path: Path) -> None:
    # A Linux cooked capture (tcpdump -i any) does not start with an Ethernet header: read as one,
    # its flows would be garbage, so the lab refuses it and names the conversion.
    with pytest.raises(ValueError, match=r"link type 113 is not Ethernet.*nfpark trace pad"):
        list(frames(DATA / "mptcp-v1.pcap"))
    # the link type is the field's low 16 bits (tcpdump's bootp_asan.pcap: 0x04000001, Ethernet)
    got = list(frames(DATA / "bootp_asan.pcap"))
    assert [len(f) for f in got] == [90]
    wifi = tmp_path / "wifi.pcap"
    wifi.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 127))
    with pytest.raises(ValueError, match="link type 127"):
        per_flow_reordering(wifi, wifi)


def test_frames_refuse_a_cut_record_header(tmp_path: Path) -> None:
    good = _pcap(tmp_path / "g.pcap", [_frame(0, 0), _frame(1, 1)])
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(good.read_bytes() + b"\x00" * 10)  # 10 of a record header's 16 bytes
    assert len(list(frames(good))) == 2
    with pytest.raises(ValueError, match="truncated packet record header at byte"):
        list(frames(cut))
