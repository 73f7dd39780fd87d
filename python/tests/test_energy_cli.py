"""`nfpark energy` end to end through `python3 -m nfpark` (what the C++ `nfpark` forwards to)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli

from nfpark.energy.model import LITERAL_W_PER_TBPS, PAPER_W_PER_TBPS, SYSTEMS
from nfpark.energy.params import names


def test_json_shape() -> None:
    r = run_cli("energy", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == {"systems", "params", "reading"}
    assert list(doc["systems"]) == list(SYSTEMS)
    for name, entry in doc["systems"].items():
        assert set(entry) == {"watts", "w_per_tbps"}
        assert entry["w_per_tbps"] == pytest.approx(PAPER_W_PER_TBPS[name], rel=0.01)
    assert doc["reading"] == "table2"
    assert set(doc["params"]) == set(names())
    assert doc["params"]["server_idle_w"] == pytest.approx(172.4348, abs=1e-4)


def test_json_literal_and_load_options() -> None:
    doc = json.loads(run_cli("energy", "--json", "--reading", "literal").stdout)
    assert doc["reading"] == "literal"
    assert round(doc["systems"]["ribosome"]["w_per_tbps"]) == LITERAL_W_PER_TBPS["ribosome"]
    doc = json.loads(run_cli("energy", "--json", "--tbps", "2", "--packet-size", "1000",
                             "--set", "rnic_w=20", "nics_per_server=4").stdout)
    assert doc["params"]["tbps"] == 2 and doc["params"]["packet_bytes"] == 1000
    assert doc["params"]["rnic_w"] == 20 and doc["params"]["nics_per_server"] == 4
    assert doc["systems"]["asic"]["watts"] == pytest.approx(108 + 0.312 * 250)


def test_text_table() -> None:
    r = run_cli("energy")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].split()[:3] == ["system", "watts", "W/Tbps"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert set(rows) == {"Baseline", "PayloadPark", "Ribosome", "Tiara", "nicmem", "QUEUE-MEM",
                         "ASIC-only"}
    assert rows["QUEUE-MEM"].split()[2] == "517.7"
    # Aligned: the numeric columns end at the same offset on every row.
    for col in (1, 2):
        ends = {[m.end() for m in re.finditer(r"\S+", line)][col] for line in lines[1:]}
        assert len(ends) == 1, (col, ends)


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "nosuch=1"], "unknown parameter 'nosuch'; valid: tbps,"),
    (["--set", "rnic_w=lots"], "--set rnic_w: 'lots' is not a number"),
    (["--tbps", "0"], "tbps = 0.0: must be greater than 0"),
    (["--data-dir", "/nonexistent/power"], "does not exist"),
    (["--reading", "other"], "invalid choice"),
])
def test_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    r = run_cli("energy", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert message in r.stderr


def test_help_for_newcomers() -> None:
    for verb in (["energy"], ["energy", "deploy"]):
        r = run_cli(*verb, "--help")
        assert r.returncode == 0
        assert "example" in r.stdout and "rnic_w" in r.stdout
    top = run_cli("--help")
    assert top.returncode == 0 and "energy" in top.stdout


def test_no_verb_is_a_usage_error() -> None:
    r = run_cli()
    assert r.returncode == 2 and "VERB" in r.stderr


def test_deploy_json() -> None:
    r = run_cli("energy", "deploy", "--mpps", "83.3333333", "--per-core-mpps", "10", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    d = doc["deploy"]
    assert (d["cores"], d["servers"], d["nics"]) == (9, 1, 1)
    assert d["payload_at"] == "switch"
    assert d["watts"] == pytest.approx(sum(d["parts"].values()))
    assert list(doc["compare"]) == list(SYSTEMS)
    assert doc["reading"] == "table2"


def test_deploy_text_and_options_on_either_level() -> None:
    r = run_cli("energy", "--reading", "literal", "deploy", "--mpps", "10",
                "--per-core-mpps", "1", "--payload-at", "server")
    assert r.returncode == 0, r.stderr
    assert "10 cores" in r.stdout and "reading literal" in r.stdout
    r = run_cli("energy", "deploy", "--mpps", "10", "--per-core-mpps", "0")
    assert r.returncode == 2 and "per_core_mpps" in r.stderr


def test_plot_flag_writes_png(tmp_path: object) -> None:
    from pathlib import Path

    out = Path(str(tmp_path)) / "fig3.png"
    r = run_cli("energy", "--plot", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
