"""Fig. 3: one line per system, labelled axes, a PNG on disk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest

from nfpark.energy import LABELS, SYSTEMS, Reading, defaults
from nfpark.energy.model import PAPER_W_PER_TBPS
from nfpark.energy.plot import figure, save, sweep


def test_figure_has_one_line_per_system() -> None:
    fig = figure(defaults(Reading.TABLE2), Reading.TABLE2)
    (ax,) = fig.axes
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == [LABELS[s] for s in SYSTEMS]
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == labels
    assert "Mpps" in ax.get_xlabel() and "[W]" in ax.get_ylabel()
    assert "Fig. 3" in ax.get_title()


def test_series_follow_fig3_points() -> None:
    xs, _ = sweep(defaults(Reading.TABLE2), Reading.TABLE2)
    assert len(xs) == 10  # 1..10 fully loaded 100 Gbps ports
    assert xs[0] == pytest.approx(8.3333, abs=1e-4) and xs[-1] == pytest.approx(83.333, abs=1e-3)
    fig = figure(defaults(Reading.TABLE2), Reading.TABLE2)
    qm = fig.axes[0].get_lines()[SYSTEMS.index("queuemem")]
    ys = cast(Sequence[float], qm.get_ydata())
    assert ys[-1] == pytest.approx(PAPER_W_PER_TBPS["queuemem"], rel=0.01)


def test_save_writes_non_empty_png(tmp_path: Path) -> None:
    out = save(defaults(Reading.LITERAL), Reading.LITERAL, tmp_path / "fig3.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
