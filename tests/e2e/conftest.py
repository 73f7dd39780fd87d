"""Fixtures for the end-to-end tests: the binary under test and the session's Lab."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab


@pytest.fixture(scope="session", autouse=True)
def nfpark_binary() -> Path:
    """The binary under test; every e2e test fails (not skips) when it is missing."""
    path = cli.nfpark_bin()
    if not path.is_file():
        pytest.fail(f"nfpark binary not found at {path}: build it with "
                    f"`cmake --build {cli.REPO}/build -j2 --target nfpark` or set NFPARK_BIN")
    return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("lab"))
