"""What the peer comparisons share: ratios over interleaved repetitions, the `RATIO peer` and
`SKIP peer` lines, a scratch directory with names unique to this process, and the measurement
of a device under test (DUT) by its CPU time per packet.

How a DUT is measured (nfpark, dpdk-testpmd, FastClick). On this shared 2-core machine a
process gets a varying share of a CPU, so wall-time rates mostly measure the load. A DUT whose
input never runs dry (a pcap replayed from memory by DPDK's net_pcap with infinite_rx=1, or a
preloaded trace) and whose output never pushes back (net_null) is busy from its first packet to
its last: its CPU time per packet is its cost, whatever share of the core it got. Start-up (EAL,
mempools, loading the trace) is removed by running the same command twice, short and long:
cost = (CPU_long - CPU_short) / (packets_long - packets_short).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    return Path(os.environ.get("BUILD_DIR", ROOT / "build")).resolve()


@dataclass
class Ratio:
    """peer cost / nfpark cost per packet: > 1 means nfpark is faster."""

    peer: list[float] = field(default_factory=list)  # ns/packet, one per repetition
    nfpark: list[float] = field(default_factory=list)

    def add(self, nfpark_ns: float, peer_ns: float) -> None:
        self.nfpark.append(nfpark_ns)
        self.peer.append(peer_ns)

    def text(self) -> str:
        if not self.peer or not self.nfpark or min(self.nfpark) <= 0:
            return "n/a"
        per = [p / n for p, n in zip(self.peer, self.nfpark, strict=True) if n > 0]
        return (
            f"{min(self.peer) / min(self.nfpark):.2f}x "
            f"[{min(per):.2f}-{max(per):.2f}, N={len(per)}]"
        )


class Report:
    """Collects the RATIO and SKIP lines; prints each one as it comes."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.failed: list[str] = []

    def ratio(self, peer: str, what: str, r: Ratio, extra: str = "") -> None:
        line = f"RATIO peer {peer} {what} nfpark/{peer} {r.text()}"
        if extra:
            line += f" ({extra})"
        self.lines.append(line)
        print(line, flush=True)

    def skip(self, peer: str, reason: str) -> None:
        line = f"SKIP peer {peer}: {reason}"
        self.lines.append(line)
        print(line, flush=True)

    def fail(self, peer: str, reason: str) -> None:
        line = f"FAILED peer {peer}: {reason}"
        self.failed.append(line)
        self.lines.append(line)
        print(line, file=sys.stderr, flush=True)


class PeerError(Exception):
    """A peer that started but did not give a measurement (its reason goes in FAILED)."""


def scratch() -> Path:
    """A directory under /tmp named after this process; removed by cleanup()."""
    d = Path(tempfile.mkdtemp(prefix=f"nfpark-peers-{os.getpid()}-"))
    return d


def cleanup(d: Path) -> None:
    shutil.rmtree(d, ignore_errors=True)
    # DPDK's run-time directories of the processes this run started (file prefixes end in
    # this process's id: nfpeers, nfpkovs, nfpeerfc, peerwire).
    for p in Path("/var/run/dpdk").glob(f"*{os.getpid()}"):
        if p.name.startswith(("nfpeers", "nfpkovs", "nfpeerfc", "peerwire")):
            shutil.rmtree(p, ignore_errors=True)


@dataclass
class Run:
    cpu_s: float  # user + system CPU of the process (and its children)
    wall_s: float
    stdout: str
    stderr: str
    rc: int
    # With `ready` (run_for): the CPU the process had used when its `ready` line appeared and
    # when it was told to stop (0: not sampled) — its start-up and its teardown lie outside.
    ready_cpu_s: float = 0.0
    stop_cpu_s: float = 0.0

    def busy_cpu_s(self) -> float:
        """CPU from `ready` to the stop when both were sampled, else the whole run's."""
        if self.ready_cpu_s and self.stop_cpu_s > self.ready_cpu_s:
            return self.stop_cpu_s - self.ready_cpu_s
        return self.cpu_s


def thread_cpu_ns(task: Path) -> int:
    """A thread's time on a CPU so far (`task`: /proc/PID/task/TID; schedstat's first field)."""
    return int((task / "schedstat").read_text().split()[0])


def _process_cpu(pid: int) -> float:
    """CPU time so far of the live threads of process `pid`, in seconds, 0 if it is gone."""
    total = 0
    try:
        for t in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += thread_cpu_ns(t)
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended meanwhile
    except OSError:
        return 0.0
    return total / 1e9


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_for(
    cmd: list[str],
    seconds: float | None,
    stop: signal.Signals = signal.SIGINT,
    env: dict[str, str] | None = None,
    timeout: float = 300.0,
    ready: str | None = None,
) -> Run:
    """Runs `cmd`. With `seconds`, sends `stop` that long after the line `ready` appeared on
    its stdout (or after its start) — a DUT that runs until told to stop; else waits for it to
    end. Its CPU time is what RUSAGE_CHILDREN grew by while it ran (one child at a time); with
    `ready`, also the CPU it had used when the line appeared and when it was stopped."""
    cpu0 = _children_cpu()
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,  # kept open: testpmd exits when its stdin closes
            stdout=out,
            stderr=err,
            env=env,
            text=True,
        )
        ready_cpu = stop_cpu = 0.0
        try:
            if seconds is not None:
                if ready is not None:
                    # Polled often: the CPU sampled here should be the start-up's alone.
                    while p.poll() is None and time.monotonic() - t0 < timeout:
                        out.seek(0)
                        if ready in out.read():
                            ready_cpu = _process_cpu(p.pid)
                            break
                        time.sleep(0.002)
                try:
                    p.wait(timeout=seconds)
                except subprocess.TimeoutExpired:
                    if ready_cpu:
                        stop_cpu = _process_cpu(p.pid)
                    p.send_signal(stop)
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise PeerError(f"{Path(cmd[0]).name} did not end within {timeout:.0f} s") from None
        finally:
            if p.stdin:
                p.stdin.close()
        out.seek(0)
        err.seek(0)
        return Run(_children_cpu() - cpu0, time.monotonic() - t0, out.read(), err.read(),
                   p.returncode, ready_cpu, stop_cpu)


def cost_ns(run: Callable[[float], tuple[Run, int]], short_s: float, long_s: float) -> float:
    """ns of CPU per packet of a DUT: run(seconds) -> (Run, packets it processed), twice."""
    # On a loaded machine the start-up's CPU varies by more than a short run's share of a CPU:
    # a pair whose long run did not cost more is measured again (3 tries). A DUT that says when
    # it starts forwarding is measured from there to its stop (Run.busy_cpu_s): dpdk-testpmd's
    # start-up and teardown (~1.2 s of CPU at load 14, 2-4x its 1 s run's forwarding; once 2.0
    # s) otherwise enter each difference with their own variance — at 1500 B, where fewer
    # packets share it, enough to move testpmd's cost by a third between runs
    # (docs/performance.md §6, "testpmd io at 1500 B").
    why = ""
    for _ in range(3):
        a, pa = run(short_s)
        b, pb = run(long_s)
        ca, cb = a.busy_cpu_s(), b.busy_cpu_s()
        if pb > pa and cb > ca:
            return (cb - ca) * 1e9 / (pb - pa)
        why = (f"{pa} -> {pb} packets, {ca:.2f} -> {cb:.2f} s CPU")
    raise PeerError(f"no measurable difference between a {short_s} s and a {long_s} s run "
                    f"in 3 tries (last: {why})")


def have(tool: str) -> str | None:
    return shutil.which(tool)


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def nfpark_bin() -> Path:
    return build_dir() / "nfpark"


def gen_trace(out: Path, packets: int, flows: int, slf: int, size: int, proto: str = "udp") -> Path:
    """A trace from nfpark's generator (the same traffic for every peer)."""
    if not out.exists():
        subprocess.run(
            [str(nfpark_bin()), "trace", "gen", "--out", str(out), "--packets", str(packets),
             "--flows", str(flows), "--slf", str(slf), "--size", str(size), "--proto", proto],
            check=True, stdout=subprocess.DEVNULL,
        )
    return out
