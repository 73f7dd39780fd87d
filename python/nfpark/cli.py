"""Command-line entry point of the nfpark lab: `python3 -m nfpark VERB ...`.

Adding a verb: write a module with one function

    def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        p = verbs.add_parser("repro", help="...", description="...")
        p.add_argument(...)
        p.set_defaults(run=run_repro)          # run(args) -> int (exit code)

and add the module's name to `VERB_MODULES` below. Handlers report user mistakes by raising
`CliError` (or `ValueError`); `main` prints them as one line on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

# One line per verb: the module that owns it and defines `register(verbs)`.
VERB_MODULES: tuple[str, ...] = ("nfpark.energy.cli", "nfpark.demo", "nfpark.repro.cli",
                                 "nfpark.testbed.cli", "nfpark.testbed.dissector")

EXIT_USAGE = 2


class CliError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line (`nfpark VERB: error: ...`) and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (try --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nfpark",
        description="nfpark lab commands (Python). Run `nfpark VERB --help` for a verb's options.",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    verbs.required = True
    for name in VERB_MODULES:
        importlib.import_module(name).register(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except BrokenPipeError:  # `nfpark VERB | head`: stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's flush quiet
        return 0
    except (CliError, ValueError, OSError, RuntimeError) as err:
        print(f"nfpark {args.verb}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
