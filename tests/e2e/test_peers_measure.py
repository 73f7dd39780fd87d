"""How the peer bench measures a DUT's CPU per packet (scripts/peers/common.py): a DUT that
says when it starts forwarding is measured from there to its stop, so its start-up and teardown
do not enter the cost (pure Python, ~2 s; the peers themselves run only in
`scripts/bench.sh --peers`)."""

from __future__ import annotations

import sys

from . import nfpark_cli as cli

sys.path.insert(0, str(cli.REPO / "scripts" / "peers"))
import common

# Burns ~0.4 s of CPU (its "start-up"), says it is ready, then spins until SIGINT, then burns
# ~0.3 s more (its "teardown").
CHILD = r"""
import signal, sys, time
def burn(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
stop = False
def on_int(*_):
    global stop
    stop = True
signal.signal(signal.SIGINT, on_int)
burn(0.4)
print("ready", flush=True)
while not stop:
    pass
burn(0.3)
"""


def test_run_for_samples_the_cpu_between_ready_and_stop() -> None:
    r = common.run_for([sys.executable, "-c", CHILD], 0.5, ready="ready", timeout=30)
    assert r.rc == 0
    assert r.ready_cpu_s >= 0.35  # the start-up's burn
    assert r.stop_cpu_s > r.ready_cpu_s
    # the whole run holds the start-up and the teardown; the busy part holds neither
    assert r.cpu_s - r.stop_cpu_s >= 0.25
    assert r.busy_cpu_s() < r.cpu_s - 0.6


def test_run_for_without_ready_samples_nothing() -> None:
    r = common.run_for([sys.executable, "-c", "pass"], None)
    assert r.ready_cpu_s == 0 and r.stop_cpu_s == 0
    assert r.busy_cpu_s() == r.cpu_s


def test_cost_ns_leaves_out_a_start_up_that_varies() -> None:
    # 50 ns a packet while busy; start-ups of 0.8 and 1.6 s (as dpdk-testpmd's at load 14):
    # differencing whole runs would give a negative cost here.
    startups = iter([1.6, 0.8])

    def dut(seconds: float) -> tuple[common.Run, int]:
        pkts = int(seconds * 10_000_000)
        s = next(startups)
        busy = pkts * 50e-9
        return common.Run(s + busy + 0.3, seconds, "", "", 0, s, s + busy), pkts

    assert abs(common.cost_ns(dut, 1.0, 5.0) - 50.0) < 1e-6


def test_cost_ns_differences_whole_runs_without_samples() -> None:
    def dut(seconds: float) -> tuple[common.Run, int]:
        pkts = int(seconds * 10_000_000)
        return common.Run(0.2 + pkts * 40e-9, seconds, "", "", 0), pkts

    assert abs(common.cost_ns(dut, 1.0, 5.0) - 40.0) < 1e-6
