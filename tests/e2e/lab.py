"""Session-wide cache for the end-to-end tests: generated traces, baseline outputs and batches
of `nfpark run` processes (run a few at a time)."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import nfpark_cli as cli

Runs = dict[str, tuple[Path, subprocess.CompletedProcess[str]]]  # mode -> (out, process)


class Lab:
    """Session-wide cache: generated traces (by options) and baseline outputs (by trace, chain)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._traces: dict[str, Path] = {}
        self._baselines: dict[tuple[Path, str, Path | None], tuple[Path, cli.Json]] = {}
        self._runs: dict[str, Runs] = {}

    @staticmethod
    def _key(*parts: object) -> str:
        return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]

    def trace(self, packets: int = 4000, **opts: str | int | float | bool) -> Path:
        key = self._key(packets, sorted(opts.items()))
        if key not in self._traces:
            self._traces[key] = cli.gen(self.root / f"trace-{key}.pcap", packets, **opts)
        return self._traces[key]

    def baseline(self, trace: Path, chain: str,
                 config: Path | None = None) -> tuple[Path, cli.Json]:
        """Baseline output of `chain` over `trace` (run once per session), checked balanced."""
        k = (trace, chain, config)
        if k not in self._baselines:
            out = self.root / f"base-{self._key(trace, chain, config)}.pcap"
            res = cli.run(trace, out, "baseline", chain, config=config)
            cli.assert_accounting(res)
            self._baselines[k] = (out, res)
        return self._baselines[k]


    def batch(self, trace: Path, chain: str, specs: Mapping[str, tuple[str, Sequence[str]]],
              config: Path | None = None) -> Runs:
        """Runs `chain` over `trace` once per spec (name -> (mode, extra flags)), a few
        processes at a time (most of a run is DPDK start-up, so this saves wall time), once
        per session. Returns name -> (output pcap, finished process); callers check the exit."""
        key = self._key(trace, chain, sorted((k, v[0], tuple(v[1])) for k, v in specs.items()),
                        config)
        if key not in self._runs:
            def one(name: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
                mode, extra = specs[name]
                out = self.root / f"{self._key(key, name)}.pcap"
                return out, cli.start_run(trace, out, mode, chain, *extra, config=config)

            with ThreadPoolExecutor(max_workers=PARALLEL_RUNS) as pool:
                self._runs[key] = dict(zip(specs, pool.map(one, specs), strict=True))
        return self._runs[key]

    def modes(self, trace: Path, chain: str, modes: Sequence[str],
              config: Path | None = None, extra: Sequence[str] = ()) -> Runs:
        """`chain` over `trace` in each of `modes` (see batch); keyed by mode."""
        return self.batch(trace, chain, {m: (m, extra) for m in modes}, config)


PARALLEL_RUNS = 3
