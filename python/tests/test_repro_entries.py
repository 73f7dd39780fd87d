"""Every entry's --quick run: JSON with nfpark and paper series, a PNG, and sane numbers.

These drive the C++ binary (build/nfpark, or $NFPARK_BIN) and are skipped when it is missing.
Each entry runs once per session (about 1 minute for all five on this machine).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from nfpark import dataplane
from nfpark.repro import REPROS, Repro, Result, by_name
from nfpark.repro.plot import figure


def _built() -> bool:
    try:
        dataplane.binary()
    except dataplane.DataplaneError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _built(), reason="nfpark not built")

_RUNS: dict[str, tuple[Result, dict[str, Any], Path, str]] = {}


def _quick(name: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[
        Result, dict[str, Any], Path, str]:
    """Runs an entry's quick version once; (Result, its JSON, its PNG, progress lines)."""
    if name not in _RUNS:
        out = tmp_path_factory.mktemp(name)
        progress = io.StringIO()
        res = by_name(name).run(True, out, progress)
        doc = json.loads((out / f"{name}.json").read_text())
        _RUNS[name] = (res, doc, out / f"{name}.png", progress.getvalue())
    return _RUNS[name]


def _values(doc: dict[str, Any], label: str) -> list[float]:
    for panel in doc["panels"]:
        for s in panel["series"]:
            if s["label"] == label:
                return list(s["y"])
    raise KeyError(label)


def _row(doc: dict[str, Any], case: str, metric: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [r for r in doc["rows"]
                                  if r["case"] == case and r["metric"] == metric]
    (row,) = rows
    return row


@pytest.mark.parametrize("repro", REPROS, ids=[r.name for r in REPROS])
def test_quick_run_writes_json_and_png_with_both_sides(
        repro: Repro, tmp_path_factory: pytest.TempPathFactory) -> None:
    res, doc, png, progress = _quick(repro.name, tmp_path_factory)
    assert doc["status"] == "ok", doc["errors"]
    assert doc["name"] == repro.name and doc["paper"] == repro.paper and doc["quick"] is True
    # --quick's promise (a minute) is for a machine with its cores free: scaled by the load.
    busy = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    assert doc["seconds"] < 60 * busy, (doc["seconds"], busy)
    assert doc["commands"] and all(c.startswith("nfpark ") for c in doc["commands"])
    assert any(" run --json " in c or (" sim " in c and " --json" in c) for c in doc["commands"])
    for panel in doc["panels"]:
        assert panel["x_label"] and panel["y_label"] and panel["title"]
        nf = [s for s in panel["series"] if s["source"] == "nfpark"]
        assert nf and all(any(y is not None for y in s["y"]) for s in nf)
    assert any(s["source"] == "paper" for p in doc["panels"] for s in p["series"])
    assert any(r["nfpark"] is not None and r["paper"] is not None for r in doc["rows"])
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    # one progress line per step, numbered
    lines = progress.splitlines()
    assert len(lines) == repro.steps(True)
    assert lines[0].startswith(f"[repro {repro.name}] 1/{repro.steps(True)} ")
    fig = figure(res)
    assert len(fig.axes) == len(doc["panels"])
    for ax in fig.axes:
        legend = ax.get_legend()
        assert legend is not None
        texts = [t.get_text() for t in legend.get_texts()]
        assert any(t.startswith("nfpark") for t in texts)
    assert any(t.get_text().startswith("paper") for ax in fig.axes
               for t in ax.get_legend().get_texts())  # type: ignore[union-attr]
    assert "quick run" in fig.get_suptitle()


def test_payloadpark_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("payloadpark_goodput", tmp_path_factory)
    # 256 B with 160 B parked: 256 - 160 + 7 = 103 B to the NF, the paper's worked example
    assert _row(doc, "256 B", "bytes to NF per packet, pp160")["nfpark"] == 103
    assert _row(doc, "256 B", "PCIe load reduction, 160 B parked")["nfpark"] == pytest.approx(
        100 * (1 - 103 / 256))
    # 352 B parked needs a payload of at least 352 B: none at 256 or 384 B
    assert _row(doc, "384 B", "payloads parked, 352 B")["nfpark"] == 0
    dc = _row(doc, "dc mix", "goodput gain, 160 B parked")
    assert dc["paper"] == 13 and 10 < dc["nfpark"] < 16
    gains = _values(doc, "nfpark, 160 B parked (7 B header)")  # no None: every run worked
    assert gains[:5] == sorted(gains[:5], reverse=True)  # smaller frames gain more


def test_nfslicer_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("nfslicer_bytes", tmp_path_factory)
    assert _row(doc, "1518 B, baseline", "data bytes per packet (RX+TX)")["nfpark"] == 3036
    assert _row(doc, "1518 B, nicmem", "data bytes per packet (RX+TX)")["nfpark"] == 128
    assert _row(doc, "1518 B, nfslicer", "data bytes per packet (RX+TX)")["nfpark"] == 100
    assert _row(doc, "1518 B, nfslicer", "reduction vs baseline")["nfpark"] > 24
    assert _row(doc, "64 B, nfslicer", "data bytes per packet (RX+TX)")["nfpark"] == 128


def test_queuemem_drop_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("queuemem_drops", tmp_path_factory)
    for x in (0, 10, 30, 50):
        out = _row(doc, f"x = {x}%", "packets out / in")
        assert out["paper"] == 100 - x
        assert abs(out["nfpark"] - (100 - x)) < 3  # random drops: within sampling noise
        assert _row(doc, f"x = {x}%", "out / (in - dropped headers)")["nfpark"] == 100
        assert _row(doc, f"x = {x}%", "id mismatches (mis-merge guard)")["nfpark"] == 0
        assert _row(doc, f"x = {x}%", "queues paused at exit")["nfpark"] == 0


def test_queuemem_reorder_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("queuemem_reorder", tmp_path_factory)
    for k in (1, 8, 20):
        assert _row(doc, f"SLF {k}", "trace SLF measured")["nfpark"] == k
        assert _row(doc, f"SLF {k}", "lost")["nfpark"] == 0
        assert _row(doc, f"SLF {k}", "out of order, per flow")["nfpark"] < 0.01
    assert _row(doc, "SLF 20", "extent max, per flow")["paper"] == 10


def test_queuemem_tbps_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("queuemem_tbps", tmp_path_factory)
    qm = "queuemem at 1400 Gbps"
    assert abs(_row(doc, qm, "output")["nfpark"] - 1400) < 14  # sustains 1.4 Tbps
    assert _row(doc, qm, "lost")["nfpark"] == 0
    assert _row(doc, qm, "NF link")["nfpark"] < 100  # headers only
    assert _row(doc, qm, "peak buffer")["nfpark"] < 9  # far below the switch's 64 MB
    assert abs(_row(doc, "baseline at 1400 Gbps", "output")["nfpark"] - 100) < 2
    assert 100 < _row(doc, "payloadpark-like at 1400 Gbps", "output")["nfpark"] < 120
    for x in (0, 30, 50):
        out = _row(doc, f"drop {x}%", "output")
        assert abs(out["nfpark"] - out["paper"]) < 0.02 * 1400


def test_nfslicer_latency_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("nfslicer_latency", tmp_path_factory)
    for m in (1, 4, 7):  # NFSlicer is faster at every load; slicing 160 B is worth less
        for q in ("p50", "p90"):
            full = _row(doc, f"nfslicer at {m} Mpps", f"{q} latency vs baseline")["nfpark"]
            part = _row(doc, f"nfslicer-160 at {m} Mpps", f"{q} latency vs baseline")["nfpark"]
            assert full < part < 0, (m, q)
    g1 = _row(doc, "nfslicer at 1 Mpps", "p90 latency vs baseline")["nfpark"]
    g7 = _row(doc, "nfslicer at 7 Mpps", "p90 latency vs baseline")["nfpark"]
    assert g7 < 2 * g1  # the gap grows with the load
    # 1514 B frames: 2 x 1514 B cross without slicing, 2 x 50 B (headers + token) with it
    assert _row(doc, "baseline", "packet bytes across PCIe a packet (RX+TX)")["nfpark"] == 3028
    assert _row(doc, "nfslicer", "packet bytes across PCIe a packet (RX+TX)")["nfpark"] == 100
    for v, paper in (("baseline", 21.0), ("nfslicer", 1.9)):
        assert _row(doc, v, "PCIe traffic at 6.5 Mpps")["nfpark"] == pytest.approx(paper, rel=0.1)


def test_nicmem_nfv_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("nicmem_nfv", tmp_path_factory)
    for x in (120, 180, 200):
        assert _row(doc, f"nicmem vs host at {x} Gbps", "average latency")["nfpark"] < -5
    assert _row(doc, "nicmem vs host at 200 Gbps", "throughput")["nfpark"] > 5
    assert _row(doc, "nicmem vs host at 120 Gbps", "throughput")["nfpark"] == pytest.approx(
        0, abs=0.5)  # below saturation both deliver what is offered
    assert _row(doc, "nicmem", "packet bytes to host memory a packet")["nfpark"] == 64
    assert _row(doc, "split", "packet bytes to host memory a packet")["nfpark"] == 1500


def test_reframer_numbers(tmp_path_factory: pytest.TempPathFactory) -> None:
    _, doc, _, _ = _quick("reframer_slf", tmp_path_factory)
    slf = _values(doc, "nfpark: SLF (input at 0, Reframer output)")
    assert slf[0] == pytest.approx(1.0)
    assert all(v > 1.2 for v in slf[1:])
    assert slf[1:] == sorted(slf[1:])
    assert _values(doc, "paper: 1.2 -> 1.9 / 2.9 / 3.3") == [1.2, 1.9, 2.9, 3.3]


def test_cli_json_and_progress(tmp_path: Path) -> None:
    proc = run_cli("repro", "queuemem_drops", "--quick", "--out", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["name"] == "queuemem_drops" and doc["status"] == "ok"
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("[repro queuemem_drops]")]
    assert len(progress) == by_name("queuemem_drops").steps(True)
    assert (tmp_path / "queuemem_drops.png").stat().st_size > 20_000
