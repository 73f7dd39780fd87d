"""What a reproduction is (`Repro`), what it returns (`Result`), and how it runs nfpark (`Context`).

A reproduction runs the dataplane (or, later, a simulator) for one published result and returns
its numbers next to the paper's. Results are drawn as panels of series; every series is either
`nfpark` (measured here) or `paper` (transcribed, with where it comes from).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from nfpark import dataplane

Source = Literal["nfpark", "paper"]
X = float | str  # a number, or a category such as "dc"


@dataclass
class Series:
    """One line, set of bars or set of points: y[i] at x[i]; None where there is no value."""

    label: str
    source: Source
    x: list[X]
    y: list[float | None]
    style: Literal["line", "bar", "points", "band"] = "line"
    note: str = ""  # where the numbers come from, or what they do not say
    y_hi: list[float | None] | None = None  # a range y..y_hi (the paper gives only a range)

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y) or (self.y_hi is not None and len(self.y_hi) != len(self.y)):
            raise ValueError(f"series {self.label!r}: x, y (and y_hi) differ in length")


@dataclass
class Panel:
    """One set of axes: a title, labelled axes (with units) and its series."""

    title: str
    x_label: str
    y_label: str
    series: list[Series] = field(default_factory=list)
    y_scale: Literal["linear", "log", "symlog"] = "linear"
    ref_lines: list[tuple[float, str]] = field(default_factory=list)  # y, label (paper bounds)

    def of(self, source: Source) -> list[Series]:
        return [s for s in self.series if s.source == source]


@dataclass
class Row:
    """One number side by side: nfpark's measurement and the paper's value (or what it says)."""

    case: str
    metric: str
    unit: str
    nfpark: float | None
    paper: float | None = None
    paper_says: str = ""  # the paper's words when it gives a range, a bound or no number


@dataclass
class Result:
    """What `Repro.run` returns; `to_json()` is the DIR/NAME.json document."""

    name: str
    title: str
    panels: list[Panel]
    rows: list[Row]
    setup: dict[str, Any] = field(default_factory=dict)  # nfpark's parameters
    paper_setup: str = ""  # the paper's testbed for this figure
    notes: list[str] = field(default_factory=list)
    status: Literal["ok", "partial", "failed"] = "ok"
    errors: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    seconds: float = 0.0
    quick: bool = False

    def to_json(self, repro: Repro) -> dict[str, Any]:
        return {
            "name": self.name, "paper": repro.paper, "figure": repro.figure,
            "description": repro.description, "title": self.title, "quick": self.quick,
            "status": self.status, "errors": self.errors, "seconds": round(self.seconds, 2),
            "setup": self.setup, "paper_setup": self.paper_setup, "notes": self.notes,
            "rows": [dataclasses.asdict(r) for r in self.rows],
            "panels": [dataclasses.asdict(p) for p in self.panels],
            "commands": self.commands,
        }


class Context:
    """Runs nfpark for an entry: temp files, the command log, progress lines and failures."""

    def __init__(self, name: str, workdir: Path, quick: bool, steps: int,
                 progress: TextIO | None = sys.stderr) -> None:
        self.name = name
        self.workdir = workdir
        self.quick = quick
        self.steps = steps
        self.step = 0
        self.progress = progress
        self.commands: list[str] = []
        self.errors: list[str] = []
        self._t0 = time.monotonic()

    def say(self, what: str) -> None:
        """One progress line on stderr: `[repro NAME] step/steps what (elapsed)`."""
        self.step += 1
        if self.progress is not None:
            el = time.monotonic() - self._t0
            print(f"[repro {self.name}] {self.step}/{self.steps} {what} ({el:.1f} s)",
                  file=self.progress, flush=True)

    def nfpark(self, *args: str) -> str:
        """`nfpark ARGS` (logged); returns stdout; raises DataplaneError when it fails."""
        cmd = ["nfpark", *args]
        self.commands.append(shlex.join(cmd))
        return dataplane.nfpark(*args).stdout

    def gen(self, out: Path, **opts: Any) -> Path:
        self.nfpark("trace", "gen", "--out", str(out), *flags(opts))
        return out

    def run(self, **opts: Any) -> dict[str, Any]:
        """`nfpark run --json --no-progress ...` (key `in_` for --in); the parsed result."""
        doc: dict[str, Any] = json.loads(self.nfpark("run", "--json", "--no-progress",
                                                     *flags(opts)))
        return doc

    def try_run(self, what: str, **opts: Any) -> dict[str, Any] | None:
        """Like run, but a failure (e.g. a mode this build lacks) is recorded, not raised."""
        try:
            return self.run(**opts)
        except dataplane.DataplaneError as err:
            self.errors.append(f"{what}: {err}")
            if self.progress is not None:
                print(f"[repro {self.name}] {what} FAILED: {err}", file=self.progress, flush=True)
            return None

    def stats(self, trace: Path) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.nfpark("trace", "stats", str(trace), "--json"))
        return doc

    def reorder(self, sent: Path, received: Path) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.nfpark("trace", "reorder", str(sent),
                                                     str(received), "--json"))
        return doc


def flags(opts: dict[str, Any]) -> list[str]:
    """{"park_bytes": 160, "pace": True, "in_": p} -> [--park-bytes, 160, --pace, --in, p]."""
    out: list[str] = []
    for key, val in opts.items():
        flag = "--" + key.rstrip("_").replace("_", "-")
        if val is True:
            out.append(flag)
        elif val is not False and val is not None:
            out += [flag, str(val)]
    return out


@dataclass(frozen=True)
class Repro:
    """One reproducible result: a row of the registry (`nfpark.repro.registry.REPROS`).

    `measure(ctx)` does the work and returns a Result; `steps(quick)` is how many progress lines
    it prints. `run(quick, out)` wraps it: runs, catches failures, writes OUT/NAME.json and
    OUT/NAME.png. A simulator's entries are more rows with another `measure`.
    """

    name: str
    paper: str  # short citation, e.g. "PayloadPark (CoNEXT'20)"
    figure: str  # which figure/section of the paper
    description: str  # one line for `nfpark repro LIST`
    measure: Callable[[Context], Result]
    steps: Callable[[bool], int]
    fallback: Callable[[], Result]  # the paper's side alone, drawn when nfpark cannot run

    def run(self, quick: bool, out: Path, progress: TextIO | None = sys.stderr) -> Result:
        """Measure (quick: a small version, < 1 minute) and write OUT/NAME.{json,png}."""
        import tempfile

        from nfpark.repro import plot  # matplotlib: only when drawing

        out.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"nfpark-repro-{self.name}-") as tmp:
            ctx = Context(self.name, Path(tmp), quick, self.steps(quick), progress)
            try:
                res = self.measure(ctx)
            except (dataplane.DataplaneError, OSError, ValueError) as err:
                res = self.fallback()
                res.status = "failed"
                ctx.errors.append(str(err))
                res.notes.append("nfpark did not run: only the paper's numbers are shown")
        res.errors = ctx.errors + res.errors
        if res.errors and res.status == "ok":
            res.status = "partial"
        res.commands = ctx.commands
        res.quick = quick
        res.seconds = time.monotonic() - t0
        (out / f"{self.name}.json").write_text(json.dumps(res.to_json(self), indent=2) + "\n")
        plot.save(res, out / f"{self.name}.png")
        return res
