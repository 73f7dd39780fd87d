"""A switch with several NF servers (issue 16, "Many NF servers"; docs/run.md "Many NF servers").

With 2 NF servers (one process, served inline) every mode's output on a generated trace with
packet ids is baseline's with the same 2 servers: byte-identical (queuemem: the same multiset,
per-flow order kept), every packet counted, pools full, both servers used and the per-server
counts summing to the totals. With 3 servers on the NF lcore the servers answer at their own
pace: the same packets, each flow in order. A config with the wrong number of NF ports is
refused with one clear error. Two-process form: the switch with 2 NF ports (memif) to 2
`--role nf` processes; one is killed mid-run (SIGKILL) and restarted: the switch keeps going,
declares it down, reclaims its slots, sends its flows to the live server, takes it back when it
answers again, and accounts for every packet with its pools full.

Costs about 50 s on an idle machine (the two-process tests replay 6 s of paced traffic each).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
MODES = ("baseline", *cli.ALL_PARK_MODES)
TWO = ("--nf-servers", "2")


def check_servers(res: cli.Json, m: int) -> None:
    servers = res["servers"]
    assert len(servers) == m, servers
    assert all(s["packets_to"] > 0 for s in servers), servers  # every server got flows
    assert sum(s["packets_to"] for s in servers) == res["packets_to_nf"], res
    assert sum(s["packets_from"] for s in servers) == res["packets_from_nf"], res
    assert sum(s["bytes_to"] for s in servers) == res["bytes_to_nf"], res
    assert sum(s["nf_drops"] for s in servers) == res["nf_drops"], res


@pytest.mark.parametrize("mode", cli.ALL_PARK_MODES)
def test_two_servers_every_mode_equals_baseline(lab: Lab, mode: str) -> None:
    trace = lab.trace(3000, flows=120, seed=7, proto="mix", size="dc", ipv6=0.3)
    runs = lab.modes(trace, CHAIN, MODES, extra=TWO)
    base_out, base_proc = runs["baseline"]
    base = cli.result(base_proc)
    out, proc = runs[mode]
    res = cli.result(proc)
    for r in (base, res):
        cli.assert_accounting(r)
        check_servers(r, 2)
        assert r["packets_in"] == r["packets_out"] == 3000, r
        assert sum(r["drops"].values()) == 0, r["drops"]
    # The same flows went to the same server in every mode.
    assert [s["packets_to"] for s in res["servers"]] == [s["packets_to"] for s in base["servers"]]
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, out)
        r = cli.reorder(trace, out)
        assert r["lost"] == r["duplicated"] == r["unmatched"] == r["flow_reordered"] == 0, r
    else:
        cli.assert_same_pcap(base_out, out)
    assert cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace)) == 3000
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0 and res["merged"] == res["split"], res


@pytest.mark.parametrize("mode", ["payloadpark", "queuemem"])
def test_three_servers_on_the_nf_lcore_keep_every_flow_in_order(lab: Lab, mode: str) -> None:
    trace = lab.trace(3000, flows=120, seed=8, proto="mix", size="dc")
    extra = ("--nf-servers", "3", "--nf-lcore", "--nf-spread", "symmetric")
    runs = lab.modes(trace, CHAIN, ("baseline", mode), extra=extra)
    base_out, base_proc = runs["baseline"]
    out, proc = runs[mode]
    for p in (base_proc, proc):
        res = cli.result(p)
        cli.assert_accounting(res)
        check_servers(res, 3)
        assert res["packets_out"] == 3000, res
    cli.assert_same_multiset(base_out, out)
    r = cli.reorder(trace, out)
    assert r["lost"] == r["duplicated"] == r["unmatched"] == r["flow_reordered"] == 0, r


def test_nf_ports_must_match_the_servers(tmp_path: Path, lab: Lab) -> None:
    trace = lab.trace(100)
    p = cli.nfpark("run", "--role", "switch", "--in", trace, "--out", tmp_path / "o.pcap",
                   "--nf-servers", "2", "--nf-port", "vdev:net_memif0,role=client")
    assert p.returncode == 2, cli.describe(p)
    assert "1 NF port(s) for 2 NF server(s)" in p.stderr and "joined by +" in p.stderr, p.stderr
    p = cli.nfpark("run", "--in", trace, "--out", tmp_path / "o.pcap", "--nf-servers", "2",
                   "--park-slices", "3")
    assert p.returncode == 2 and "3 slices for 2 NF servers" in p.stderr, cli.describe(p)


# ---------------------------------------------------------------------------------------------
# Two processes: kill one NF server mid-run and start it again.


def memif(sock: Path, role: str, n: int = 0) -> str:
    return f"vdev:net_memif{n},role={role},socket={sock},socket-abstract=no"


def wait_for(sock: Path, server: subprocess.Popen[str]) -> None:
    """Waits until the memif server `server` has created `sock` (once its EAL is up: seconds on
    a loaded machine); fails at once, with its stderr, if it ended instead."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if sock.exists():
            time.sleep(0.2)
            return
        if server.poll() is not None:
            pytest.fail(f"the switch ended (exit {server.returncode}) before creating {sock}:\n"
                        f"{server.communicate()[1][-2000:]}")
        time.sleep(0.05)
    pytest.fail(f"{sock} did not appear within 30 s")


def start_nf(sock: Path, mode: str) -> subprocess.Popen[str]:
    """An NF server process, memif client of the switch's socket `sock`."""
    return subprocess.Popen(
        [str(cli.nfpark_bin()), "run", "--role", "nf", "--mode", mode, "--chain", "counter",
         "--port", memif(sock, "client"), "--idle-exit", "2", "--json", "--timeout", "40",
         "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ended(p: subprocess.Popen[str]) -> cli.Json:
    out, err = p.communicate(timeout=40)
    assert out, err[-2000:]
    res: cli.Json = json.loads(out)
    return res


@pytest.mark.parametrize("mode", ["payloadpark", "queuemem"])
def test_killed_nf_server_is_reclaimed_bypassed_and_taken_back(lab: Lab, tmp_path: Path,
                                                               mode: str) -> None:
    # 6 s of traffic at 40 Mbit/s; 64 flows over 2 servers.
    trace = lab.trace(30000, flows=64, size=1000, rate_gbps=0.04, seed=3)
    # Where each flow goes when both servers live (the same rule in one process).
    ref = cli.run(trace, tmp_path / "ref.pcap", mode, "counter", *TWO)
    share = [s["packets_to"] for s in ref["servers"]]
    socks = [tmp_path / "a.sock", tmp_path / "b.sock"]
    # The switch serves a memif socket per NF server; the servers connect to it (and the
    # restarted one connects again).
    sw = subprocess.Popen(
        [str(cli.nfpark_bin()), "run", "--role", "switch", "--mode", mode, "--in", str(trace),
         "--out", str(tmp_path / "out.pcap"), "--pace", *TWO, "--nf-dead-after", "300",
         "--nf-port", memif(socks[0], "server", 0) + "+" + memif(socks[1], "server", 1),
         "--json", "--no-progress", "--timeout", "40"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    nfs: list[subprocess.Popen[str]] = []
    restarted = None
    try:
        for s in socks:
            wait_for(s, sw)
        nfs = [start_nf(s, mode) for s in socks]
        time.sleep(2.5)  # traffic flows to both
        assert sw.poll() is None, sw.communicate()[1][-2000:]
        os.kill(nfs[1].pid, signal.SIGKILL)
        nfs[1].wait()
        time.sleep(0.8)
        restarted = start_nf(socks[1], mode)
        out, err = sw.communicate(timeout=40)
        nf0, nf1 = ended(nfs[0]), ended(restarted)
    finally:
        for p in (sw, *nfs, *([restarted] if restarted else [])):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert sw.returncode == 0, err[-3000:]
    res: cli.Json = json.loads(out)
    cli.assert_accounting(res)  # balanced, pools full
    assert res["status"] == "complete" and res["packets_in"] == 30000, res
    s0, s1 = res["servers"]
    # Server 1 went down, and was taken back once the new process answered.
    assert s1["downs"] >= 1 and s1["takebacks"] >= 1 and s1["live"] is True, json.dumps(res)
    assert s0["downs"] == 0, s0
    assert nf1["packets_in"] > 0 and nf1["pools_full"] is True, nf1  # the restarted one served
    assert nf0["pools_full"] is True, nf0
    # What the dead server never answered is counted, and its memory was reclaimed.
    assert res["drops"]["nf_unanswered"] == s1["unanswered"] > 0, res
    if mode == "payloadpark":
        assert res["counters"]["reclaimed"] > 0, res["counters"]
    else:
        assert res["counters"]["recoveries_down"] > 0, res["counters"]
    # While it was down its flows went to server 0: more than its share with both alive.
    assert s0["packets_to"] > share[0] and s1["packets_to"] < share[1], (share, res["servers"])
    assert res["held_at_exit"] == 0
    # Every payload that left sits on its own header.
    got = cli.frame_bytes(tmp_path / "out.pcap")
    assert cli.assert_own_payloads(got, cli.frame_bytes(trace)) == res["packets_out"]


def test_hung_nf_server_does_not_stall_the_others(lab: Lab, tmp_path: Path) -> None:
    """An NF server that hangs (SIGSTOP: its memif rings fill, nothing comes back) is declared
    down after --nf-dead-after; the switch keeps serving its other server meanwhile and after,
    and when the hung one wakes (SIGCONT) with its stale backlog, nothing merges wrongly,
    everything is counted, pools are full."""
    trace = lab.trace(30000, flows=64, size=1000, rate_gbps=0.04, seed=5)
    ref = cli.run(trace, tmp_path / "ref.pcap", "payloadpark", "counter", *TWO)
    share = [s["packets_to"] for s in ref["servers"]]
    socks = [tmp_path / "a.sock", tmp_path / "b.sock"]
    sw = subprocess.Popen(
        [str(cli.nfpark_bin()), "run", "--role", "switch", "--mode", "payloadpark", "--in",
         str(trace), "--out", str(tmp_path / "out.pcap"), "--pace", *TWO, "--nf-dead-after",
         "300", "--nf-port", memif(socks[0], "server", 0) + "+" + memif(socks[1], "server", 1),
         "--json", "--no-progress", "--timeout", "40"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    nfs: list[subprocess.Popen[str]] = []
    try:
        for s in socks:
            wait_for(s, sw)
        nfs = [start_nf(s, "payloadpark") for s in socks]
        time.sleep(2.0)  # traffic flows to both
        assert sw.poll() is None, sw.communicate()[1][-2000:]
        os.kill(nfs[1].pid, signal.SIGSTOP)
        time.sleep(1.5)
        os.kill(nfs[1].pid, signal.SIGCONT)
        out, err = sw.communicate(timeout=40)
        nf0, nf1 = ended(nfs[0]), ended(nfs[1])
    finally:
        for p in (sw, *nfs):
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                p.kill()
                p.wait()
    assert sw.returncode == 0, err[-3000:]
    res: cli.Json = json.loads(out)
    cli.assert_accounting(res)
    assert res["status"] == "complete" and res["packets_in"] == 30000, res
    s0, s1 = res["servers"]
    assert s1["downs"] >= 1 and s0["downs"] == 0, json.dumps(res["servers"])
    assert s0["packets_to"] > share[0], (share, res["servers"])  # it took the hung one's flows
    assert nf0["pools_full"] is True and nf1["pools_full"] is True, (nf0, nf1)
    assert res["held_at_exit"] == 0
    got = cli.frame_bytes(tmp_path / "out.pcap")
    assert cli.assert_own_payloads(got, cli.frame_bytes(trace)) == res["packets_out"]
