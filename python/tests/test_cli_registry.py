"""The verb registry: one `register(verbs)` function per module adds a verb."""

from __future__ import annotations

import argparse
import sys
import types

import pytest

from nfpark import cli


def _fake_verb_module() -> types.ModuleType:
    mod = types.ModuleType("nfpark_test_fake_verb")

    def run(args: argparse.Namespace) -> int:
        if args.fail:
            raise cli.CliError("it failed, clearly")
        print(f"hello {args.name}")
        return 0

    def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        p = verbs.add_parser("hello", help="say hello")
        p.add_argument("name")
        p.add_argument("--fail", action="store_true")
        p.set_defaults(run=run)

    mod.register = register  # type: ignore[attr-defined]
    return mod


def test_energy_is_registered() -> None:
    assert "nfpark.energy.cli" in cli.VERB_MODULES
    args = cli.build_parser().parse_args(["energy"])
    assert callable(args.run)


def test_a_new_verb_is_one_module(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "nfpark_test_fake_verb", _fake_verb_module())
    monkeypatch.setattr(cli, "VERB_MODULES", (*cli.VERB_MODULES, "nfpark_test_fake_verb"))
    assert cli.main(["hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert cli.main(["hello", "x", "--fail"]) == 2
    assert capsys.readouterr().err == "nfpark hello: error: it failed, clearly\n"
