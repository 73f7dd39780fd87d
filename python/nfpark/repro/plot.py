"""Draws a reproduction's Result: one panel per axes, nfpark's series with the paper's overlaid.

nfpark is drawn in colour (bars or solid lines with filled markers); the paper in black/grey
(dashed lines, open markers, star points, hatched bands for ranges). Every legend entry starts with
"nfpark" or "paper", so the two are told apart at a glance.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nfpark.repro.core import Panel, Result, Series, X

NFPARK_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:cyan", "tab:olive")
PAPER_COLORS = ("black", "dimgray", "saddlebrown", "darkred")


def _categories(panel: Panel) -> list[X] | None:
    """The x categories in first-seen order when any x is a string (e.g. "dc"), else None."""
    xs = [x for s in panel.series for x in s.x]
    if not any(isinstance(x, str) for x in xs):
        return None
    cats: list[X] = []
    for x in xs:
        if x not in cats:
            cats.append(x)
    return cats


def _pos(x: X, cats: list[X] | None) -> float:
    return float(cats.index(x)) if cats is not None else float(x)


def _points(s: Series, cats: list[X] | None) -> tuple[list[float], list[float]]:
    pairs = [(_pos(x, cats), y) for x, y in zip(s.x, s.y, strict=True) if y is not None]
    return [p for p, _ in pairs], [y for _, y in pairs]


def _draw_panel(ax: Axes, panel: Panel) -> None:
    cats = _categories(panel)
    bars = [s for s in panel.series if s.style == "bar"]
    width = 0.8 / max(len(bars), 1) if cats is not None else 0.0
    n_col = p_col = 0
    for s in panel.series:
        if s.source == "nfpark":
            color = NFPARK_COLORS[n_col % len(NFPARK_COLORS)]
            n_col += 1
        else:
            color = PAPER_COLORS[p_col % len(PAPER_COLORS)]
            p_col += 1
        xs, ys = _points(s, cats)
        if s.style == "bar":
            i = bars.index(s)
            off = (i - (len(bars) - 1) / 2) * width
            ax.bar([x + off for x in xs], ys, width=width * 0.95, label=s.label, color=color,
                   alpha=0.85 if s.source == "nfpark" else 0.35,
                   hatch="" if s.source == "nfpark" else "//", edgecolor=color)
        elif s.style == "band":
            hi = s.y_hi or s.y
            lo_hi = [(_pos(x, cats), lo, h) for x, lo, h in zip(s.x, s.y, hi, strict=True)
                     if lo is not None and h is not None]
            ax.fill_between([p for p, _, _ in lo_hi], [lo for _, lo, _ in lo_hi],
                            [h for _, _, h in lo_hi], color=color, alpha=0.15, hatch="//",
                            label=s.label, edgecolor=color)
        elif s.style == "points":
            if s.y_hi is not None:
                his = [h for h, y in zip(s.y_hi, s.y, strict=True) if y is not None]
                errs = [[0.0] * len(ys), [max(h - y, 0.0) if h is not None else 0.0
                                          for h, y in zip(his, ys, strict=True)]]
                ax.errorbar(xs, ys, yerr=errs, fmt="*", markersize=13, color=color, capsize=5,
                            label=s.label, linestyle="none")
            else:
                ax.plot(xs, ys, "*", markersize=14, color=color, label=s.label,
                        markeredgecolor="white", markeredgewidth=0.5)
        elif s.source == "nfpark":
            ax.plot(xs, ys, "-o", color=color, label=s.label, linewidth=2)
        else:
            ax.plot(xs, ys, "--s", color=color, label=s.label, fillstyle="none", markersize=8)
    for y, label in panel.ref_lines:
        ax.axhline(y, color="black", linestyle=":", linewidth=1.2, label=label)
    if cats is not None:
        ax.set_xticks(range(len(cats)), [c if isinstance(c, str) else f"{c:g}" for c in cats])
        ax.set_xlim(-0.6, len(cats) - 0.4)
    if panel.y_scale == "symlog":
        ax.set_yscale("symlog", linthresh=0.01)
    else:
        ax.set_yscale(panel.y_scale)
    ax.set_xlabel(panel.x_label)
    ax.set_ylabel(panel.y_label)
    ax.set_title(panel.title, fontsize=10)
    ax.grid(True, linestyle="--", linewidth=0.5, alpha=0.6)
    # below the axes: a legend never hides a data point
    ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1,
              frameon=False)


def figure(res: Result) -> Figure:
    """The Result as a Figure: one axes per panel, side by side, with the entry's title."""
    n = len(res.panels)
    fig = Figure(figsize=(5.2 * n + 0.6, 6.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, n, squeeze=False)[0]
    for ax, panel in zip(axes, res.panels, strict=True):
        _draw_panel(ax, panel)
    title = res.title + (" — quick run" if res.quick else "")
    if res.status != "ok":
        err = "; ".join(res.errors)[:300]
        title += "\n" + textwrap.shorten(f"nfpark {res.status}: {err}", 160)
    fig.suptitle(title, fontsize=11, color="black" if res.status == "ok" else "darkred")
    return fig


def save(res: Result, out: str | Path) -> Path:
    """Write the Result's figure as PNG to `out`."""
    path = Path(out)
    figure(res).savefig(path, format="png", dpi=110)
    return path
