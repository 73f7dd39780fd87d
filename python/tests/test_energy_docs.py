"""docs/energy.md stays in step with the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfpark.energy import SYSTEMS, Reading, compute, defaults
from nfpark.energy.params import names

DOC = Path(__file__).resolve().parents[2] / "docs" / "energy.md"
pytestmark = pytest.mark.skipif(not DOC.is_file(), reason="docs/energy.md not present")


def test_every_parameter_is_documented() -> None:
    text = DOC.read_text()
    missing = [n for n in names() if f"`{n}`" not in text]
    assert not missing


def test_documented_table2_values_are_current() -> None:
    text = DOC.read_text()
    res = compute(defaults(Reading.TABLE2), Reading.TABLE2)
    for s in SYSTEMS:
        assert f"{res[s].w_per_tbps:.2f}" in text, s
