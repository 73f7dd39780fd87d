"""Driving the C++ dataplane (`nfpark trace ...`, `nfpark run ...`) from the lab."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# Bytes a packet costs on an Ethernet wire besides its frame: preamble + SFD (8), FCS (4),
# inter-frame gap (12).
WIRE_OVERHEAD = 24


class DataplaneError(RuntimeError):
    """The nfpark binary is missing or a run failed; the message says which and why."""


def binary() -> Path:
    """The nfpark binary: $NFPARK_BIN, else build/nfpark in the repository."""
    env = os.environ.get("NFPARK_BIN")
    path = Path(env) if env else REPO / "build" / "nfpark"
    if not path.is_file():
        raise DataplaneError(f"{path}: nfpark is not built (run `make build`)")
    return path


def nfpark(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Runs `nfpark ARGS...`; raises DataplaneError with its stderr when it fails."""
    proc = subprocess.run(
        [str(binary()), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        raise DataplaneError(
            f"nfpark {' '.join(args[:2])} failed ({proc.returncode}): {msg[-1] if msg else ''}"
        )
    return proc


def gen_trace(out: Path, **opts: Any) -> Path:
    """`nfpark trace gen --out OUT --key value ...` (underscores in keys become dashes)."""
    args = ["trace", "gen", "--out", str(out)]
    for key, val in opts.items():
        flag = "--" + key.replace("_", "-")
        if val is True:
            args.append(flag)
        elif val is not False and val is not None:
            args += [flag, str(val)]
    nfpark(*args)
    return out


def run(**opts: Any) -> dict[str, Any]:
    """`nfpark run --json ...`; returns the parsed JSON result."""
    args = ["run", "--json", "--no-progress"]
    for key, val in opts.items():
        flag = "--" + key.replace("_", "-")
        if val is True:
            args.append(flag)
        elif val is not False and val is not None:
            args += [flag, str(val)]
    result: dict[str, Any] = json.loads(nfpark(*args).stdout)
    return result


def trace_stats(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(nfpark("trace", "stats", str(path), "--json").stdout)
    return result


def same_packets(a: Path, b: Path) -> bool:
    """True when two pcap files hold byte-identical packets (timestamps included)."""
    return a.read_bytes() == b.read_bytes()
