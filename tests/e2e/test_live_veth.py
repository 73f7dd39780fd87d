"""Live traffic: iperf3 (TCP) between two network namespaces, bridged by nfpark.

    nsA ─veth─ nfpark [af_packet A] ─switch─ NF server ─switch─ [af_packet B] ─veth─ nsB

The switch parks payloads (PayloadPark) or slices nothing (baseline); the NF chain counts.
Real kernel TCP must complete a transfer through it, and the run must end balanced with every
mempool full. Needs root (namespaces, veth), iperf3 and ethtool; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Names carry the test process's id, so two checkouts testing at once never share a namespace.
_TAG = f"{os.getpid() % 100000:05d}"
NS = (f"nfpkA{_TAG}", f"nfpkB{_TAG}")
HOST_IF = (f"nfa0{_TAG}", f"nfb0{_TAG}")
NS_IF = (f"nfa1{_TAG}", f"nfb1{_TAG}")
ADDR = ("10.199.7.1/24", "10.199.7.2/24")  # only inside the namespaces: no clash

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "iperf3", "ethtool")),
    reason="needs root, ip, iperf3 and ethtool",
)


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=30)


def teardown_net() -> None:
    for ns in NS:
        sh("ip", "netns", "del", ns, check=False)
    for i in HOST_IF:
        sh("ip", "link", "del", i, check=False)


@pytest.fixture()
def veth_pair() -> Iterator[None]:
    teardown_net()
    try:
        for ns, hif, nif, addr in zip(NS, HOST_IF, NS_IF, ADDR, strict=True):
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "add", hif, "type", "veth", "peer", "name", nif, "netns", ns)
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", addr, "dev", nif)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", nif, "up")
            sh("ip", "link", "set", hif, "up")
            # Whole, checksummed frames on the wire: no segmentation or checksum offload.
            off = ("tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off")
            sh("ethtool", "-K", hif, *off, check=False)
            sh("ip", "netns", "exec", ns, "ethtool", "-K", nif, *off, check=False)
        yield
    finally:
        teardown_net()


def forwarding(run: subprocess.Popen[str], limit_s: float = 30.0) -> None:
    """Waits until a ping crosses nfpark (its ports are up), at most limit_s."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end and run.poll() is None:
        p = sh("ip", "netns", "exec", NS[0], "ping", "-c", "1", "-W", "1", ADDR[1].split("/")[0],
               check=False)
        if p.returncode == 0:
            return
    pytest.fail(f"no ping crossed nfpark within {limit_s} s (exit {run.poll()})")


@pytest.mark.parametrize("mode", ["baseline", "payloadpark"])
def test_iperf3_through_nfpark(veth_pair: None, nfpark_binary: Path, mode: str) -> None:
    traffic = f"vdev:net_af_packet0,iface={HOST_IF[0]}+vdev:net_af_packet1,iface={HOST_IF[1]}"
    run = subprocess.Popen(
        [str(nfpark_binary), "run", "--mode", mode, "--chain", "firewall,counter",
         "--traffic", traffic, "--idle-exit", "3", "--timeout", "60", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        forwarding(run)  # EAL start and af_packet sockets: seconds on a loaded machine
        server = subprocess.Popen(
            ["ip", "netns", "exec", NS[1], "iperf3", "-s", "-1", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        time.sleep(0.5)
        client = sh("ip", "netns", "exec", NS[0], "iperf3", "-c", ADDR[1].split("/")[0],
                    "-t", "2", "--json", check=False)
        server.wait(timeout=20)
        out, err = run.communicate(timeout=60)
    finally:
        for p in (run,):
            if p.poll() is None:
                p.kill()
    assert client.returncode == 0, client.stdout[-500:] + client.stderr[-500:]
    sent = json.loads(client.stdout)["end"]["sum_received"]["bytes"]
    assert sent > 1_000_000, "iperf3 moved almost nothing through nfpark"
    assert run.returncode == 0, err
    res = json.loads(out)
    assert res["balanced"] and res["pools_full"]
    assert res["packets_out"] > 1000
    if mode == "payloadpark":
        assert res["split"] > 0 and res["merged"] == res["split"]
        assert res["bytes_to_nf"] < res["bytes_in"]
