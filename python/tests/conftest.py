"""Shared helpers for the lab tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python3 -m nfpark ARGS` as a user would run it (what `nfpark VERB` forwards to)."""
    full_env = {k: v for k, v in os.environ.items() if k != "NFPARK_POWER_DATA"}
    full_env["PYTHONPATH"] = str(PYTHON_DIR)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "nfpark", *args], capture_output=True,
                          text=True, env=full_env, cwd=PYTHON_DIR, timeout=120, check=False)


@pytest.fixture(autouse=True)
def _no_data_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NFPARK_POWER_DATA", raising=False)
