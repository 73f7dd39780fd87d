"""A memif peer that goes away at any moment costs packets, never a crash (docs/run.md "Separate
processes", src/dp/control_gate.h).

The NF server (`--role nf`, memif server, delaying what it serves by 100 ms so that it is
sending when a switch goes) keeps serving while switches connect, send and are stopped (SIGKILL,
SIGTERM) at random moments, then serves a whole replay from the next switch (none of what the
earlier switches were owed reaches it) and ends on its own SIGTERM with exit code 3. The other
way round, a switch whose NF server is killed keeps running and ends on its signal with every
packet counted. Before the fix the NF server died with SIGSEGV in the memif PMD's receive or
transmit function when the PMD unmapped the shared memory on DPDK's interrupt thread in the
middle of a burst.

The moments come from a seeded generator (NFPARK_TEST_SEED, default: the process id), printed on
failure. About 20 s in all.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

KILLS = 4          # switches stopped at random moments before the one that completes
STARTED_S = 1.0    # earliest stop after the switch starts (EAL up on an idle machine)
LATEST_S = 3.5     # latest stop: traffic flows by then even on a loaded machine
WAIT_S = 8.0       # longest we wait for a process that should already have ended
NULL_TRAFFIC = "vdev:net_null0,size=1400+vdev:net_null1"  # never idle: the NF link stays busy


def seed() -> int:
    return int(os.environ.get("NFPARK_TEST_SEED", os.getpid()))


def start(*args: str | Path, cpu: int | None = None) -> subprocess.Popen[str]:
    # Pinned to one CPU, the data path and DPDK's interrupt thread take turns on it, as on a
    # loaded machine: the interrupt thread runs wherever the data path was preempted.
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    return subprocess.Popen([*pin, str(cli.nfpark_bin()), "run", *(str(a) for a in args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ended(p: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = p.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"nfpark did not end within {WAIT_S} s (killed)\nstderr: {err[-2000:]}")
    return p.returncode, out, err


def memif(sock: Path, role: str) -> str:
    return f"vdev:net_memif0,role={role},socket={sock}"


def cpu_of_this_process() -> int:
    return min(os.sched_getaffinity(0))


def test_nf_server_outlives_switches_that_go_away(lab: Lab, tmp_path: Path) -> None:
    rng = random.Random(seed())
    sock = tmp_path / "nf.sock"
    nf = start("--role", "nf", "--mode", "payloadpark", "--chain", "nat,counter", "--port",
               memif(sock, "server"), "--timeout", "120", "--json", "--nf-delay-us", "100000",
               cpu=cpu_of_this_process())
    trace = lab.trace(3000, flows=60, size="dc", seed=21)
    stops: list[str] = []
    try:
        time.sleep(0.5)
        for _ in range(KILLS):
            sw = start("--role", "switch", "--mode", "payloadpark", "--traffic", NULL_TRAFFIC,
                       "--nf-port", memif(sock, "client"), "--slots", "4096", "--json",
                       "--timeout", "60")
            after = rng.uniform(STARTED_S, LATEST_S)
            sig = rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM])
            time.sleep(after)
            sw.send_signal(sig)
            ended(sw)
            stops.append(f"{signal.Signals(sig).name} after {after:.2f} s")
            time.sleep(0.05)
            assert nf.poll() is None, (f"seed {seed()}: the NF server ended (exit {nf.returncode}) "
                                       f"after {stops}\n{nf.communicate()[1][-2000:]}")
        # A switch that connects after all that is served: its replay completes, all answered.
        out = tmp_path / "out.pcap"
        sw_done = cli.nfpark("run", "--role", "switch", "--mode", "payloadpark", "--in", trace,
                             "--out", out, "--nf-port", memif(sock, "client"), "--json",
                             "--no-progress", "--timeout", "60")
        assert nf.poll() is None, f"seed {seed()}: NF exit {nf.returncode} after {stops}"
        nf.send_signal(signal.SIGTERM)
        code, nf_out, nf_err = ended(nf)
    finally:
        if nf.poll() is None:
            nf.kill()
            nf.wait()
    res = cli.result(sw_done)
    cli.assert_accounting(res)
    assert res["status"] == "complete", res
    assert res["packets_from_nf"] == res["packets_to_nf"] > 0, res
    assert res["drops"].get("nf_unanswered", 0) == 0, res
    assert cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace)) > 0
    assert code == 3, f"seed {seed()}, {stops}: NF exit {code}\n{nf_err[-2000:]}"
    nf_res = json.loads(nf_out)
    assert nf_res["end"] == "signal" and nf_res["pools_full"] is True, nf_res
    assert nf_res["packets_in"] >= res["packets_to_nf"], nf_res


def sent_to_nf(sw: subprocess.Popen[str], limit_s: float = 30.0) -> None:
    """Waits until the switch has sent packets to its NF server, read from its DPDK telemetry
    socket (a loaded machine can take longer than LATEST_S to start two EALs and connect their
    memif); without dpdk-telemetry.py, waits LATEST_S."""
    if shutil.which("dpdk-telemetry.py") is None:
        time.sleep(0.5 + LATEST_S)
        return
    end = time.monotonic() + limit_s
    while time.monotonic() < end and sw.poll() is None:
        q = subprocess.run(["dpdk-telemetry.py", "-f", f"nfpark{sw.pid}"],
                           input="/nfpark/stats\n", capture_output=True, text=True, timeout=20,
                           check=False)
        line = next((ln for ln in q.stdout.splitlines() if ln.startswith("{")), None)
        stats = json.loads(line).get("/nfpark/stats") if line else None  # null until ready
        if stats and int(stats.get("packets_to_nf", 0)) > 0:
            return
        time.sleep(0.3)
    pytest.fail(f"the switch sent nothing to its NF server within {limit_s} s")


def test_switch_outlives_an_nf_server_that_goes_away(tmp_path: Path) -> None:
    sock = tmp_path / "nf.sock"
    nf = start("--role", "nf", "--mode", "payloadpark", "--chain", "nat", "--port",
               memif(sock, "server"), "--timeout", "60", "--json")
    sw = start("--role", "switch", "--mode", "payloadpark", "--traffic", NULL_TRAFFIC,
               "--nf-port", memif(sock, "client"), "--slots", "4096", "--json", "--timeout",
               "60", cpu=cpu_of_this_process())
    try:
        sent_to_nf(sw)
        assert sw.poll() is None and nf.poll() is None
        nf.send_signal(signal.SIGKILL)
        nf.wait()
        time.sleep(1.0)
        assert sw.poll() is None, f"the switch ended (exit {sw.returncode}) when its NF died"
        sw.send_signal(signal.SIGTERM)
        code, out, err = ended(sw)
    finally:
        for p in (sw, nf):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert code == 3, f"switch exit {code}\n{err[-2000:]}"
    res = json.loads(out)
    assert res["end"] == "signal" and res["pools_full"] is True, res
    assert res["balanced"] is True, res
    assert res["packets_to_nf"] > 0, res
