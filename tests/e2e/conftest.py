"""Fixtures for the end-to-end tests: the binary, cached traces and cached baseline runs."""

from __future__ import annotations

import hashlib
from pathlib import Path

import nfpark_cli as cli
import pytest


@pytest.fixture(scope="session", autouse=True)
def nfpark_binary() -> Path:
    """The binary under test; every e2e test fails (not skips) when it is missing."""
    path = cli.nfpark_bin()
    if not path.is_file():
        pytest.fail(f"nfpark binary not found at {path}: build it with "
                    f"`cmake --build {cli.REPO}/build -j2 --target nfpark` or set NFPARK_BIN")
    return path


class Lab:
    """Session-wide cache: generated traces (by options) and baseline outputs (by trace, chain)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._traces: dict[str, Path] = {}
        self._baselines: dict[tuple[Path, str], tuple[Path, cli.Json]] = {}

    @staticmethod
    def _key(*parts: object) -> str:
        return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]

    def trace(self, packets: int = 4000, **opts: str | int | float | bool) -> Path:
        key = self._key(packets, sorted(opts.items()))
        if key not in self._traces:
            self._traces[key] = cli.gen(self.root / f"trace-{key}.pcap", packets, **opts)
        return self._traces[key]

    def baseline(self, trace: Path, chain: str) -> tuple[Path, cli.Json]:
        """Baseline output of `chain` over `trace` (run once per session), checked balanced."""
        k = (trace, chain)
        if k not in self._baselines:
            out = self.root / f"base-{self._key(trace, chain)}.pcap"
            res = cli.run(trace, out, "baseline", chain)
            cli.assert_accounting(res)
            self._baselines[k] = (out, res)
        return self._baselines[k]


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("lab"))
