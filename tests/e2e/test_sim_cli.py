"""`nfpark sim` as a user drives it: a small scenario to JSON (the issue's shape) and CSV, the
text table, progress on stderr, --quick, --help, and one clear error for a bad scenario."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from . import nfpark_cli as cli

SCENARIO = """
[sim]
name = "e2e"
duration_ms = 0.3
interval_us = 50
[traffic]
ports = 2
line_gbps = 40
rate_gbps = 20
size = "dc"
flows = 100
[nf_server]
link_gbps = 40
chain = "nat"
[[variant]]
name = "base"
mode = "baseline"
[[variant]]
name = "pp160"
mode = "payloadpark"
"park.format" = "payloadpark"
[sweep]
"traffic.slf" = [1, 4]
[quick]
"sim.duration_ms" = 0.1
"""

# The keys issue 15 asks every run object to carry, in this order.
ISSUE_KEYS = ["mode", "params", "throughput_in_gbps", "throughput_out_gbps", "nf_link_gbps",
              "drops", "latency_us", "peak_buffer_bytes", "out_of_order_pct",
              "reordering_extent"]


def write(tmp_path: Path, text: str = SCENARIO) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_json_has_the_issues_shape_and_balances(tmp_path: Path) -> None:
    p = cli.nfpark("sim", write(tmp_path), "--json", "--csv", tmp_path / "csv")
    assert p.returncode == 0, cli.describe(p)
    doc = json.loads(p.stdout)
    runs = doc["runs"]
    assert len(runs) == 4  # 2 sweep points x 2 variants, sweep outermost
    assert [r["params"]["variant"] for r in runs] == ["base", "pp160", "base", "pp160"]
    assert [r["params"]["traffic.slf"] for r in runs] == [1, 1, 4, 4]
    for r in runs:
        assert list(r)[: len(ISSUE_KEYS)] == ISSUE_KEYS
        assert set(r["latency_us"]) == {"avg", "p50", "p90", "p99"}
        assert r["balanced"] and r["pools_full"]
        assert r["packets_in"] == r["packets_out"] + r["drops_total"]
        assert sum(r["drops"].values()) == r["drops_total"]
        assert 0 < r["latency_us"]["p50"] <= r["latency_us"]["p99"]
        # 2 x 20 Gbps offered; nothing is dropped at this load
        assert abs(r["throughput_in_gbps"] - 40) < 1
        assert r["out_of_order_pct"] == 0
    base, pp = runs[0], runs[1]
    assert base["mode"] == "baseline" and pp["mode"] == "payloadpark"
    assert pp["nf_link_gbps"] < base["nf_link_gbps"], "parking takes bytes off the NF link"
    assert pp["counters"]["park.splits"] > 0
    files = sorted((tmp_path / "csv").iterdir())
    assert [f.name.split("_")[0] for f in files] == ["1", "2", "3", "4"]
    rows = list(csv.DictReader(files[0].open()))
    assert rows and set(rows[0]) >= {"t_ms", "in_gbps", "out_gbps", "buffer_peak_bytes",
                                     "latency_p99_us"}
    assert float(rows[-1]["t_ms"]) > 0.3  # the series runs until the last packet is out


def test_text_table_progress_and_quick(tmp_path: Path) -> None:
    s = write(tmp_path)
    p = cli.nfpark("sim", s, "--quick")
    assert p.returncode == 0, cli.describe(p)
    assert "scenario e2e (4 runs)" in p.stdout
    assert "payloadpark" in p.stdout and "baseline" in p.stdout
    done = [ln for ln in p.stderr.splitlines() if ln.startswith("[sim e2e]")]
    assert len(done) == 4, p.stderr
    quick = json.loads(cli.nfpark("sim", s, "--quick", "--json", "--no-progress").stdout)
    full = json.loads(cli.nfpark("sim", s, "--json", "--no-progress").stdout)
    assert quick["runs"][0]["packets_in"] * 2 < full["runs"][0]["packets_in"]


def test_help_and_bad_scenarios(tmp_path: Path) -> None:
    h = cli.nfpark("sim", "--help")
    assert h.returncode == 0 and "SCENARIO" in h.stdout and "--quick" in h.stdout
    bad = write(tmp_path, "[traffic]\nrat_gbps = 3\n")
    cli.one_line_error(cli.nfpark("sim", bad), str(bad), "[traffic]", "rat_gbps")
    cli.one_line_error(cli.nfpark("sim", tmp_path / "missing.toml"), "missing.toml")
    cli.one_line_error(cli.nfpark("sim", tmp_path), "directory")
    typo = write(tmp_path, "[sim]\nmode = \"nfslicr\"\n")
    cli.one_line_error(cli.nfpark("sim", typo), "nfslicr", "nfslicer")  # names the modes
    ttl = write(tmp_path, "[sim]\nmode = \"nfslicer\"\n[nfslicer]\nttl = 0\n")
    cli.one_line_error(cli.nfpark("sim", ttl), "[nfslicer] ttl")
