"""experiments/*.npf parse with NPF's own parser (`npf` on PyPI), and one combination runs.

NPF is in the `test` extra (pip install -e 'python[test]'); without it these tests skip.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from nfpark import dataplane

REPO = Path(__file__).resolve().parents[2]
NPF_FILE = REPO / "experiments" / "payloadpark_goodput.npf"

npf_test = pytest.importorskip("npf.tests.test", reason="npf not installed (pip install npf)")


def _parse(path: Path, tags: list[str]) -> Any:
    """NPF's Test object for `path`, built the way `npf local --test PATH --tags ...` does."""
    import npf.cmdline
    import npf.parsing

    parser = argparse.ArgumentParser()
    npf.cmdline.add_verbosity_options(parser)
    npf.cmdline.add_building_options(parser)
    npf.cmdline.add_testing_options(parser, regression=False)
    npf.cmdline.add_graph_options(parser)
    args = parser.parse_args(["--test", str(path), "--tags", *tags] if tags
                             else ["--test", str(path)])
    npf.parsing.initialize(args)
    npf.parsing.create_local()
    return npf_test.Test(str(path), options=args, tags=args.tags)


@pytest.mark.parametrize("tags", [[], ["quick"]])
def test_payloadpark_npf_parses_into_the_sweep(tags: list[str]) -> None:
    test = _parse(NPF_FILE, tags)
    names = [s.name for s in test.sections]
    assert {"info", "config", "variables", "script"} <= set(names)
    combos = list(test.variables.expand())
    assert len(combos) == 18  # 6 sizes x 3 modes, each once
    sizes = Counter(str(c["SIZE"]) for c in combos)
    assert sizes == {s: 3 for s in ("256", "384", "512", "1024", "1492", "dc")}
    assert Counter(str(c["MODE"]) for c in combos) == {m: 6 for m in
                                                        ("baseline", "park160", "park352")}
    assert {int(c["PACKETS"]) for c in combos} == ({5000} if tags else {200000})
    script = test.scripts[0].content
    assert "trace gen" in script and "run --json" in script
    for key in ("LINK_BYTES", "GOODPUT", "PCIE_BYTES", "PARKED"):
        assert f"RESULT-{key}" in script


def _built() -> bool:
    try:
        dataplane.binary()
    except dataplane.DataplaneError:
        return False
    return True


@pytest.mark.skipif(not _built(), reason="nfpark not built")
def test_npf_runs_one_size_and_parses_results(tmp_path: Path) -> None:
    npf_bin = shutil.which("npf", path=str(Path(sys.executable).parent)) or shutil.which("npf")
    if npf_bin is None:
        pytest.skip("the npf command is not on PATH")
    env = dict(os.environ, NFPARK_BIN=str(dataplane.binary()))
    proc = subprocess.run(
        [npf_bin, "local", "--test", str(NPF_FILE), "--tags", "quick", "--no-graph",
         "--csv", str(tmp_path / "out.csv"), "--variables", "SIZE=256",
         "MODE={baseline,park160}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    with open(tmp_path / "out.csv") as f:
        rows = {r["MODE"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"baseline", "park160"}
    base, park = rows["baseline"], rows["park160"]
    # per packet and direction: 256 + 24 on the wire in baseline, 103 + 24 with 160 B parked
    assert float(base["y_LINK_BYTES"]) == pytest.approx(280.0)
    assert float(park["y_LINK_BYTES"]) == pytest.approx(127.0)
    assert float(park["y_PARKED"]) == pytest.approx(100.0)
    gain = float(park["y_GOODPUT"]) / float(base["y_GOODPUT"])
    assert gain == pytest.approx(280 / 127, rel=1e-4)
