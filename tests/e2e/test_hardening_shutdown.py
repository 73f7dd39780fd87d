"""Issue 14, bounded shutdown and honest verdicts: SIGINT, SIGTERM and --timeout end any run within
about a second whatever the ports, faults or delays; packets in flight are counted
(abandoned_at_exit) so in = out + drops still holds; the JSON and the exit code say whether the
run completed (0) or was cut short (3).

Every process here is bounded: a run that ignores its signal is killed after WAIT_S and the test
fails. About 25 s in all.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

WAIT_S = 8.0       # longest we wait for a process that should already have ended
BOUND_S = 1.5      # "about a second", with room for a loaded machine
STARTED_S = 3.0    # EAL and the pools are up by then, even on a loaded machine
NULL_PORTS = "vdev:net_null0+vdev:net_null1"  # ports that never go idle (in-process vdevs)


def start(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([str(cli.nfpark_bin()), "run", *(str(a) for a in args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_bounded(p: subprocess.Popen[str]) -> tuple[float, str, str]:
    """Waits for `p` (killing it after WAIT_S); returns (seconds waited, stdout, stderr)."""
    t0 = time.monotonic()
    try:
        out, err = p.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"nfpark did not end within {WAIT_S} s (killed)\nstderr: {err[-2000:]}")
    return time.monotonic() - t0, out, err


def interrupt(p: subprocess.Popen[str], sig: int, after_s: float) -> tuple[float, Json, str]:
    time.sleep(after_s)
    assert p.poll() is None, f"ended before the signal: {p.communicate()}"
    p.send_signal(sig)
    took, out, err = wait_bounded(p)
    return took, json.loads(out), err


Json = dict[str, object]


def assert_counted(res: Json) -> None:
    assert res["balanced"] is True, res
    assert res["pools_full"] is True, res


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_ends_a_live_run_on_ports_that_never_go_idle(sig: int) -> None:
    p = start("--traffic", NULL_PORTS, "--mode", "payloadpark", "--chain", "nat", "--json",
              "--timeout", "60", "--slots", "4096")
    took, res, err = interrupt(p, sig, STARTED_S)
    assert took < BOUND_S, f"{took:.2f} s after the signal"
    assert p.returncode == 3, err
    assert res["status"] == "cut_short" and res["end"] == "signal", res
    assert res["signal"] == signal.Signals(sig).name, res
    assert res["packets_in"] > 0, res
    assert_counted(res)
    assert "interrupted" in err, err


def test_timeout_ends_a_live_run_on_ports_that_never_go_idle() -> None:
    t0 = time.monotonic()
    p = start("--traffic", NULL_PORTS, "--json", "--timeout", "2")
    _, out, err = wait_bounded(p)
    took = time.monotonic() - t0
    assert took < 2 + BOUND_S + 1, f"{took:.2f} s for --timeout 2"  # + EAL start
    assert p.returncode == 0, err  # a live run's timeout is its planned end
    res = json.loads(out)
    assert res["status"] == "complete" and res["end"] == "timeout", res
    assert_counted(res)


@pytest.mark.parametrize(("mode", "extra"), [
    ("payloadpark", ()), ("payloadpark", ("--nf-lcore",)), ("queuemem", ()), ("nfslicer", ()),
], ids=["payloadpark", "payloadpark-nf-lcore", "queuemem", "nfslicer"])
def test_signal_ends_a_replay_held_up_by_long_nf_delays(lab: Lab, tmp_path: Path, mode: str,
                                                        extra: tuple[str, ...]) -> None:
    trace = lab.trace(3000, flows=60, size="dc", seed=14)
    p = start("--mode", mode, "--chain", "nat", "--in", trace, "--out", tmp_path / "o.pcap",
              "--nf-delay-us", "20000000", "--json", "--no-progress", "--slots", "4096", *extra)
    took, res, err = interrupt(p, signal.SIGINT, STARTED_S)
    assert took < BOUND_S, f"{took:.2f} s after SIGINT"
    assert p.returncode == 3, err
    assert res["status"] == "cut_short" and res["end"] == "signal", res
    assert_counted(res)
    assert res["packets_in"] > 0, res
    # The output of a cut-short run is written (what left before the end), and nothing else.
    assert len(cli.read_pcap(tmp_path / "o.pcap")) == res["packets_out"]
    assert [f.name for f in tmp_path.iterdir()] == ["o.pcap"]


def test_timeout_cuts_a_replay_short_and_says_so(lab: Lab, tmp_path: Path) -> None:
    trace = lab.trace(2000, flows=40, size="dc", seed=15)
    t0 = time.monotonic()
    p = start("--mode", "payloadpark", "--in", trace, "--nf-delay-us", "20000000", "--timeout",
              "1", "--json", "--no-progress", "--slots", "4096")
    _, out, err = wait_bounded(p)
    assert time.monotonic() - t0 < 1 + BOUND_S + STARTED_S  # the timeout runs from the start
    assert p.returncode == 3, err
    res = json.loads(out)
    assert res["status"] == "cut_short" and res["end"] == "timeout", res
    assert_counted(res)
    assert "--timeout" in err, err


def test_a_completed_replay_says_so(lab: Lab, tmp_path: Path) -> None:
    res = cli.run(lab.trace(500, seed=16), tmp_path / "o.pcap", "payloadpark", "nat")
    assert res["status"] == "complete" and res["end"] == "input_done", res


def memif(tmp_path: Path, role: str) -> str:
    return f"vdev:net_memif0,role={role},socket={tmp_path / 'nf.sock'}"


def wait_for(path: Path) -> None:
    for _ in range(100):
        if path.exists():
            return
        time.sleep(0.05)


def test_switch_names_what_its_nf_never_answered(lab: Lab, tmp_path: Path) -> None:
    """The NF process drops everything silently: the switch's run completes and names the loss
    (nf_unanswered) instead of calling it a bug."""
    trace = lab.trace(2000, flows=40, size="dc", seed=17)
    nf = start("--role", "nf", "--mode", "payloadpark", "--port", memif(tmp_path, "server"),
               "--nf-drop", "1", "--idle-exit", "1", "--timeout", "30", "--json")
    try:
        wait_for(tmp_path / "nf.sock")
        sw = cli.nfpark("run", "--role", "switch", "--mode", "payloadpark", "--in", trace,
                        "--nf-port", memif(tmp_path, "client"), "--json", "--no-progress",
                        "--timeout", "30", timeout=60)
        _, _, nf_err = wait_bounded(nf)
    finally:
        if nf.poll() is None:
            nf.kill()
            nf.wait()
    assert nf.returncode == 0, f"nf role exit {nf.returncode} (idle exit is its plan)\n{nf_err}"
    res = cli.result(sw)
    assert_counted(res)
    assert res["status"] == "complete", res
    assert res["packets_out"] < res["packets_in"], res
    assert res["drops"]["nf_unanswered"] == res["packets_to_nf"] > 0, res
    assert "a bug" not in sw.stderr, sw.stderr


def test_signal_ends_both_processes_while_the_nf_delays(lab: Lab, tmp_path: Path) -> None:
    trace = lab.trace(3000, flows=40, size="dc", seed=18)
    nf = start("--role", "nf", "--mode", "payloadpark", "--port", memif(tmp_path, "server"),
               "--nf-delay-us", "20000000", "--timeout", "60", "--json")
    wait_for(tmp_path / "nf.sock")
    # Told that the NF delays, the switch waits for its answers (3 x the delay) before ending.
    sw = start("--role", "switch", "--mode", "payloadpark", "--in", trace, "--nf-port",
               memif(tmp_path, "client"), "--json", "--no-progress", "--timeout", "60",
               "--slots", "4096", "--nf-delay-us", "20000000")
    try:
        time.sleep(STARTED_S)
        for p in (sw, nf):
            assert p.poll() is None
            p.send_signal(signal.SIGTERM)
        took_sw, out_sw, err_sw = wait_bounded(sw)
        took_nf, out_nf, err_nf = wait_bounded(nf)
    finally:
        for p in (sw, nf):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert took_sw < BOUND_S and took_nf < BOUND_S, (took_sw, took_nf)
    assert sw.returncode == 3 and nf.returncode == 3, (err_sw, err_nf)
    res_sw, res_nf = json.loads(out_sw), json.loads(out_nf)
    assert_counted(res_sw)
    assert res_nf["pools_full"] is True and res_nf["end"] == "signal", res_nf
    assert not (tmp_path / "nf.sock").exists(), "the memif socket stayed behind"


def test_no_dpdk_runtime_directory_is_left_behind(lab: Lab, tmp_path: Path) -> None:
    p = start("--in", lab.trace(300, seed=19), "--out", tmp_path / "o.pcap", "--no-progress")
    wait_bounded(p)
    assert p.returncode == 0
    assert not Path(f"/var/run/dpdk/nfpark{p.pid}").exists()
    p = start("--traffic", NULL_PORTS, "--timeout", "0.5")
    wait_bounded(p)
    assert not Path(f"/var/run/dpdk/nfpark{p.pid}").exists()
