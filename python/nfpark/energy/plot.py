"""QUEUE-MEM Fig. 3: power of every deployment vs input throughput, drawn with matplotlib Agg."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nfpark.energy.model import LABELS, SYSTEMS, SystemPower, compute, load_of
from nfpark.energy.params import Params, Reading

# The paper's colours, line styles and markers (released plot.py).
STYLE: dict[str, tuple[str, str, str]] = {
    "baseline": ("gray", "--", "o"), "payloadpark": ("red", "--", "."),
    "ribosome": ("blue", "--", "v"), "tiara": ("purple", ":", "D"),
    "nicmem": ("orange", ":", "^"), "queuemem": ("green", ":", "*"),
    "asic": ("yellowgreen", "--", ">"),
}


def sweep(p: Params, reading: Reading) -> tuple[list[float], dict[str, list[SystemPower]]]:
    """Results with 1, 2, ... input ports fully loaded, up to p.tbps (as Fig. 3 does)."""
    ports = load_of(p).in_ports
    loads = [m * p.link_gbps / 1e3 for m in range(1, ports)] + [p.tbps]
    xs: list[float] = []
    series: dict[str, list[SystemPower]] = {s: [] for s in SYSTEMS}
    for tbps in loads:
        q = dataclasses.replace(p, tbps=tbps)
        xs.append(load_of(q).total_mpps)
        for name, res in compute(q, reading).items():
            series[name].append(res)
    return xs, series


def _label_heights(finals: dict[str, float], gap: float = 1.12) -> dict[str, float]:
    """Heights for end-of-line labels, pushed apart (log scale) so none overlap."""
    heights: dict[str, float] = {}
    last = 0.0
    for name, y in sorted(finals.items(), key=lambda kv: kv[1]):
        heights[name] = max(y, last * gap)
        last = heights[name]
    return heights


def figure(p: Params, reading: Reading) -> Figure:
    """The Fig. 3 plot as a Figure; one line per system, labelled with LABELS."""
    xs, series = sweep(p, reading)
    fig = Figure(figsize=(8, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for name in SYSTEMS:
        color, style, marker = STYLE[name]
        ys = [r.watts for r in series[name]]
        ax.plot(xs, ys, label=LABELS[name], color=color, linestyle=style, marker=marker,
                fillstyle="none")
    finals = {n: series[n][-1].watts for n in SYSTEMS}
    for name, y in _label_heights(finals).items():
        ax.annotate(f"{int(finals[name]):,} W", (xs[-1], finals[name]), xytext=(xs[-1] * 1.02, y),
                    textcoords="data", va="center", fontsize=8, color=STYLE[name][0])
    ax.set_yscale("log")
    ticks = [t for t in (100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
             if min(finals.values()) / 2 < t < max(finals.values()) * 2]
    ax.set_yticks(ticks, [f"{t:,}" for t in ticks])
    ax.set_xlim(0, xs[-1] * 1.15)
    ax.set_xlabel(f"Input throughput [Mpps] ({p.packet_bytes:g} B packets, "
                  f"{p.link_gbps:g} Gbps ports)")
    ax.set_ylabel("Power [W] (log scale)")
    ax.set_title(f"Power of NF deployments vs load (QUEUE-MEM Fig. 3; reading: {reading})")
    ax.grid(True, which="both", linestyle="--", linewidth=0.5, alpha=0.6)
    ax.legend(loc="upper left", ncol=2, fontsize=9)
    return fig


def save(p: Params, reading: Reading, out: str | Path) -> Path:
    """Write the Fig. 3 plot as PNG to `out`."""
    path = Path(out)
    figure(p, reading).savefig(path, format="png", dpi=120)
    return path
