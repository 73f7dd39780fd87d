"""`nfpark repro LIST`, name errors, and an entry that cannot run nfpark (reported, no crash)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from nfpark.repro import REPROS

NAMES = ["payloadpark_goodput", "nfslicer_bytes", "nfslicer_latency", "nicmem_nfv",
         "queuemem_drops", "queuemem_reorder", "queuemem_tbps", "reframer_slf"]


def test_list_names_every_entry_with_paper_and_figure() -> None:
    proc = run_cli("repro", "LIST")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 * len(REPROS)
    assert [r.name for r in REPROS] == NAMES
    for r in REPROS:
        (head,) = [ln for ln in lines if ln.startswith(r.name + " ")]
        assert r.paper in head and r.figure in head
        assert r.description in proc.stdout
    assert "PayloadPark (CoNEXT'20)" in proc.stdout and "QUEUE-MEM (NSDI'26)" in proc.stdout
    assert run_cli("repro", "list").stdout == proc.stdout


def test_unknown_name_is_one_line_error() -> None:
    proc = run_cli("repro", "payloadpark")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "no reproduction named 'payloadpark'" in proc.stderr
    assert "payloadpark_goodput" in proc.stderr


def test_missing_binary_is_reported_not_a_crash(tmp_path: Path) -> None:
    proc = run_cli("repro", "queuemem_drops", "--quick", "--out", str(tmp_path),
                   env={"NFPARK_BIN": str(tmp_path / "no-such-nfpark")})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "nfpark repro queuemem_drops:" in proc.stderr and "not built" in proc.stderr
    doc = json.loads((tmp_path / "queuemem_drops.json").read_text())
    assert doc["status"] == "failed" and doc["errors"] and doc["rows"] == []
    sources = {s["source"] for p in doc["panels"] for s in p["series"]}
    assert "paper" in sources  # the paper's side is still drawn
    png = (tmp_path / "queuemem_drops.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
