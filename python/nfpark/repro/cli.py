"""`nfpark repro LIST` and `nfpark repro NAME [--quick] [--out DIR] [--json]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nfpark.repro.core import Repro, Result
from nfpark.repro.registry import REPROS, by_name

DESCRIPTION = """\
Reproduce a published result with nfpark: run the dataplane for it, then write OUT/NAME.json
(nfpark's numbers and the paper's side by side, and every command run) and OUT/NAME.png
(nfpark's result with the paper's numbers overlaid). Progress goes to stderr, one line per step.
docs/repro.md describes each entry and how nfpark's setup differs from the paper's testbed.

examples:
  nfpark repro LIST                                  # the entries
  nfpark repro payloadpark_goodput --quick           # a small version (< 1 minute)
  nfpark repro queuemem_drops --out results --json   # full run, JSON on stdout
  nfpark repro all --quick                           # every entry
"""


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = verbs.add_parser("repro", help="reproduce the papers' results and plot them",
                         description=DESCRIPTION,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME|LIST|all",
                   help="an entry of `nfpark repro LIST`, LIST to list them, all to run all")
    p.add_argument("--quick", action="store_true",
                   help="small version: under a minute per entry (used by the tests)")
    p.add_argument("--out", type=Path, default=Path("repro-results"), metavar="DIR",
                   help="where NAME.json and NAME.png go (default ./repro-results)")
    p.add_argument("--json", action="store_true", help="print the result JSON on stdout")
    p.set_defaults(run=run_repro)


def list_text() -> str:
    width = max(len(r.name) for r in REPROS)
    lines = []
    for r in REPROS:
        lines.append(f"{r.name:<{width}}  {r.paper}, {r.figure}")
        lines.append(f"{'':<{width}}  {r.description}")
    return "\n".join(lines)


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.0f}"


def summary(res: Result) -> str:
    """The rows as a table: case, metric, nfpark, paper (or what the paper says)."""
    rows = [("case", "metric", "nfpark", "paper")]
    for r in res.rows:
        paper = _num(r.paper) if r.paper is not None else ""
        if r.paper_says:
            paper = f"{paper} ({r.paper_says})" if paper else r.paper_says
        unit = f" {r.unit}" if r.unit else ""
        rows.append((r.case, r.metric, _num(r.nfpark) + unit, paper or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:>{widths[2]}}  {d}".rstrip()
                     for a, b, c, d in rows)


def _one(repro: Repro, args: argparse.Namespace) -> tuple[int, Result]:
    res = repro.run(args.quick, args.out)
    if not args.json:
        print(f"{repro.name}: {repro.paper}, {repro.figure} ({res.status}, {res.seconds:.1f} s)")
        print(summary(res))
        print(f"wrote {args.out / (repro.name + '.json')} and {args.out / (repro.name + '.png')}")
    for err in res.errors:
        print(f"nfpark repro {repro.name}: {err}", file=sys.stderr)
    return (0 if res.status == "ok" else 1), res


def run_repro(args: argparse.Namespace) -> int:
    if args.name.lower() == "list":
        print(list_text())
        return 0
    repros = list(REPROS) if args.name == "all" else [by_name(args.name)]
    docs = []
    status = 0
    for repro in repros:
        code, res = _one(repro, args)
        status = max(status, code)
        docs.append(res.to_json(repro))
    if args.json:
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    return status
