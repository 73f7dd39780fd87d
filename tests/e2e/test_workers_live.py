"""`nfpark run --workers 2` on live ports (af_packet on veths), issue 16.

    ns A ──veth── ns S: nfpark [af_packet qpairs=2]  ──  [af_packet qpairs=2] ──veth── ns B
    tcpreplay TRACE        2 workers, Steer (src/dp/steer.h)                  dumpcap

Each worker reads its own af_packet queue (the kernel's PACKET_FANOUT spread) and passes the
frames of another worker's flows over on a steering ring, so each flow is one worker's. The
frames that reach ns B are the trace's (one worker's baseline on the same trace, offline): the
same frames, each flow's in order; the run balances with every pool full, both workers carried
traffic and some frames were re-steered. Through a NAT, real kernel TCP (iperf3) works in both
directions with two workers: the replies, addressed to the external port, reach the worker that
holds their mapping. Namespaces and veths carry the test process's id and are removed after
each test. Needs root, ip, ethtool, tcpreplay, dumpcap and iperf3; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab
from .test_workers import assert_same_flows, workers_carried

_TAG = f"{os.getpid() % 100000:05d}"
NS_A, NS_S, NS_B = f"wla{_TAG}", f"wls{_TAG}", f"wlb{_TAG}"
IF_A, IF_SA, IF_SB, IF_B = f"wla0{_TAG}", f"wla1{_TAG}", f"wlb1{_TAG}", f"wlb0{_TAG}"
ADDR_A, ADDR_B = "10.201.9.1", "10.201.9.2"  # only inside the namespaces
EXT = "10.201.9.100"  # the NAT's external address, on B's subnet

TOOLS = ("ip", "ethtool", "tcpreplay", "dumpcap", "iperf3")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in TOOLS),
    reason=f"needs root and {', '.join(TOOLS)} (scripts/setup.sh installs them)",
)

MODES = ("baseline", *cli.ALL_PARK_MODES)
PACKETS = 1500


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=60)


def ns(name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return sh("ip", "netns", "exec", name, *args, check=check)


def teardown_net() -> None:
    for n in (NS_A, NS_S, NS_B):
        sh("ip", "netns", "del", n, check=False)


@pytest.fixture()
def net() -> Iterator[None]:
    teardown_net()
    try:
        for n in (NS_A, NS_S, NS_B):
            sh("ip", "netns", "add", n)
            ns(n, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            ns(n, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            ns(n, "ip", "link", "set", "lo", "up")
        off = ("tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off")
        for end, sw, addr in ((NS_A, IF_A, ADDR_A), (NS_B, IF_B, ADDR_B)):
            peer = IF_SA if end == NS_A else IF_SB
            sh("ip", "link", "add", sw, "netns", end, "type", "veth", "peer", "name", peer,
               "netns", NS_S)
            ns(end, "ip", "addr", "add", f"{addr}/24", "dev", sw)
            for n, i in ((end, sw), (NS_S, peer)):
                ns(n, "ip", "link", "set", i, "mtu", "1600", "up")  # the trace has 1518 B
                ns(n, "ethtool", "-K", i, *off, check=False)
        yield
    finally:
        teardown_net()


def start_nfpark(mode: str, chain: str, *extra: str) -> subprocess.Popen[str]:
    # 2048 frames per socket ring: a worker the loaded machine does not run for a while must
    # not lose frames in the kernel (nfpark adds qpairs=2 itself).
    traffic = (f"vdev:net_af_packet0,iface={IF_SA},framecnt=2048"
               f"+vdev:net_af_packet1,iface={IF_SB},framecnt=2048")
    return subprocess.Popen(
        ["ip", "netns", "exec", NS_S, str(cli.nfpark_bin()), "run", *extra, "--mode", mode,
         "--chain", chain, "--traffic", traffic, "--workers", "2", "--idle-exit", "1.5",
         "--timeout", "40", "--json", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(run: subprocess.Popen[str]) -> cli.Json:
    try:
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err[-2000:]
    res: cli.Json = json.loads(out)
    return res


def wait_ready(run: subprocess.Popen[str]) -> None:
    """Until a ping from A reaches B through nfpark (its start-up takes seconds under load)."""
    deadline = time.time() + 40
    while ns(NS_A, "ping", "-c", "1", "-W", "0.5", ADDR_B, check=False).returncode != 0:
        assert run.poll() is None, run.communicate()[1][-2000:]
        assert time.time() < deadline, "nfpark never forwarded a ping"


@pytest.fixture(scope="module")
def trace(lab: Lab) -> Path:
    return lab.trace(PACKETS, flows=60, seed=11, proto="mix", size="dc")


@pytest.mark.parametrize("mode", MODES)
def test_live_two_workers_give_the_trace_in_every_mode(net: None, lab: Lab, trace: Path,
                                                       tmp_path: Path, mode: str) -> None:
    base_out, _ = lab.baseline(trace, "counter")
    run = start_nfpark(mode, "counter")
    cap = tmp_path / "b.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", NS_B, "dumpcap", "-q", "-P", "-i", IF_B, "-w",
                             str(cap)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_ready(run)
        deadline = time.time() + 10
        while not cap.exists() and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        replay = ns(NS_A, "tcpreplay", "-q", "--pps", "3000", "-i", IF_A, str(trace),
                    check=False)
        assert replay.returncode == 0, replay.stderr
        res = finish(run)  # --idle-exit: 1.5 s after the last frame
    finally:
        if run.poll() is None:
            run.kill()
        dump.send_signal(signal.SIGINT)
        dump.wait(timeout=10)
    cli.assert_accounting(res)
    assert res["end"] == "idle_exit", json.dumps(res)
    assert res["pools_full"] and res["balanced"]
    assert res["packets_in"] == res["packets_out"] >= PACKETS, json.dumps(res)
    carried = workers_carried(res, 2)
    assert sum(carried) == res["packets_in"] and min(carried) > PACKETS // 5, carried
    assert res["ports"]["worker0.steered"] + res["ports"]["worker1.steered"] > 0, res["ports"]
    got = tmp_path / "got.pcap"  # the trace's frames that reached B (not the kernels' own)
    cli.write_pcap(got, [f for f in cli.read_pcap(cap) if cli.payload_id(f.data) is not None])
    assert cli.assert_own_payloads(cli.frame_bytes(got), cli.frame_bytes(trace)) == PACKETS
    if mode in cli.MULTISET_MODES:
        cli.assert_same_multiset(base_out, got)
    else:
        assert_same_flows(base_out, got)
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0 and res["merged"] == res["split"], res


@pytest.mark.parametrize("mode", ("baseline", "payloadpark"))
def test_live_nat_both_directions_with_two_workers(net: None, tmp_path: Path, mode: str) -> None:
    # B answers the external address at A's switch-side MAC: the NAT's replies cross nfpark.
    mac = ns(NS_A, "cat", f"/sys/class/net/{IF_A}/address").stdout.strip()
    ns(NS_B, "ip", "neigh", "replace", EXT, "lladdr", mac, "dev", IF_B, "nud", "permanent")
    cfg = tmp_path / "nat.toml"
    cfg.write_text(f'[nf.nat]\nexternal = ["{EXT}"]\ninside = ["{ADDR_A}/32"]\n')
    run = start_nfpark(mode, "nat,counter", str(cfg))
    server: subprocess.Popen[str] | None = None
    try:
        wait_ready(run)
        server = subprocess.Popen(["ip", "netns", "exec", NS_B, "iperf3", "-s", "-1", "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        client = ns(NS_A, "iperf3", "-c", ADDR_B, "-t", "2", "-P", "16", "--json", check=False)
        sout, _ = server.communicate(timeout=20)
        res = finish(run)
    finally:
        for p in (run, server):
            if p is not None and p.poll() is None:
                p.kill()
    assert client.returncode == 0, client.stdout[-800:] + client.stderr[-500:]
    assert json.loads(client.stdout)["end"]["sum_received"]["bytes"] > 1_000_000
    # The server saw the external address: the NAT rewrote A's side, and its replies came back.
    peers = {c["remote_host"] for c in json.loads(sout)["start"]["connected"]}
    assert peers == {EXT}, peers
    cli.assert_accounting(res)
    assert res["pools_full"] and res["balanced"]
    assert res["nf"]["nat.outbound"] > 1000 and res["nf"]["nat.inbound"] > 1000, res["nf"]
    assert res["nf"].get("nat.drop.no_mapping", 0) == 0, res["nf"]
    carried = workers_carried(res, 2)
    assert min(carried) > 0, carried  # 17 connections over two workers: all on one, 2^-16


def test_testbed_with_two_workers_and_two_nf_servers() -> None:
    """`nfpark testbed up --nf-link memif --nf-servers 2` with `--workers 2` on the switch and on
    each NF server: kernel TCP (4 streams) and a large ping cross it in payloadpark mode, both
    switch workers and both servers carry traffic, everything balances with pools full."""
    from nfpark.testbed import net as tbnet
    from nfpark.testbed.ping import ping

    tid = f"w{os.getpid() % 100000}"
    try:
        tb = tbnet.up(tid, "payloadpark", nf_servers=2, nf_link="memif",
                      switch_args=("--workers", "2"), nf_args=("--workers", "2"))
        server = subprocess.Popen(["ip", "netns", "exec", tb.ns("server"), "iperf3", "-s", "-1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            c = ns(tb.ns("client"), "iperf3", "-c", tbnet.SERVER_IP, "-t", "2", "-P", "16",
                   "--json", check=False)
            server.wait(timeout=20)
        finally:
            if server.poll() is None:
                server.kill()
        assert c.returncode == 0, c.stdout[-800:] + c.stderr[-400:]
        assert json.loads(c.stdout)["end"]["sum_received"]["bytes"] > 1_000_000
        p = ping(tb.ns("client"), tbnet.SERVER_IP, 3, size=1472)  # ping.py: why not loss %
        assert p.all_answered, p.stdout
        res = tbnet.down(tid)
    finally:
        tbnet.down(tid)
    sw = res.get("switch")
    assert sw and sw["balanced"] is True and sw["pools_full"] is True, res
    assert int(sw["split"]) > 0, sw  # type: ignore[call-overload]
    assert min(workers_carried(sw, 2)) > 0
    servers = sw["servers"]
    assert isinstance(servers, list) and len(servers) == 2, sw
    assert all(s["packets_to"] > 0 for s in servers), servers
    for k in (1, 2):
        nf = res.get(f"nf{k}")
        assert nf and nf["pools_full"] is True, res
