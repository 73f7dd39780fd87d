"""The measured CSV means: embedded constants, data-directory resolution."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nfpark.energy import measurements
from nfpark.energy.measurements import DEFAULT_DATA_DIR, EMBEDDED, load_dir, resolve

needs_data = pytest.mark.skipif(not DEFAULT_DATA_DIR.is_dir(),
                                reason=f"{DEFAULT_DATA_DIR} not present")


@needs_data
def test_embedded_constants_equal_csv_means() -> None:
    m = load_dir(DEFAULT_DATA_DIR)
    for field in ("idle_w", "nf_full_w", "nf_header_w", "rdma_w"):
        assert getattr(m, field) == pytest.approx(getattr(EMBEDDED, field), rel=1e-12), field


def test_documented_means() -> None:
    # shared/research/queuemem_power.md §1
    assert EMBEDDED.idle_w == pytest.approx(197.3348, abs=1e-4)
    assert EMBEDDED.nf_full_w == pytest.approx(419.6592, abs=1e-4)
    assert EMBEDDED.nf_header_w == pytest.approx(480.6012, abs=1e-4)
    assert EMBEDDED.rdma_w == pytest.approx(240.8861, abs=1e-4)


def test_fallback_to_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(measurements, "DEFAULT_DATA_DIR", tmp_path / "absent")
    assert resolve() is EMBEDDED


@needs_data
def test_env_and_argument_directories(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for f in DEFAULT_DATA_DIR.glob("*_watt.csv"):
        shutil.copy(f, tmp_path)
    (tmp_path / "idle_watt.csv").write_text(
        "time;timedelta;total;kwh_diff;usage\nx;y;1;1;100\nx;y;1;1;110\n")
    assert resolve(tmp_path).idle_w == pytest.approx(105)
    monkeypatch.setenv("NFPARK_POWER_DATA", str(tmp_path))
    assert resolve().source == str(tmp_path)


def test_missing_explicit_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        resolve(tmp_path / "nope")
    with pytest.raises(ValueError, match=r"idle_watt\.csv"):
        resolve(tmp_path)


def test_bad_csv(tmp_path: Path) -> None:
    bad = tmp_path / "idle_watt.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="usage"):
        measurements.read_usage_mean(bad)
