"""`nfpark run --workers N`: flows sharded over N lcores (docs/run.md "Workers", issue 16).

With two workers every mode gives the packets one worker's baseline gives — the same frames, each
flow's in the same order (flows of different workers interleave differently) — every packet is
accounted for, pools are full, and both workers carried traffic. Three workers on this 2-core
machine do too (more lcores than CPUs must not deadlock). Through a NAT, the replies of every
flow reach the worker that holds its mapping (the steering rule of core/shard.h). The two-process
form (--role switch + --role nf on memif, one memif queue per worker) gives the same packets.
Each run uses its own DPDK file prefix (the PID) and memif socket path, so the file runs
alongside any other.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest

from . import nat_frames as F
from . import nfpark_cli as cli
from .lab import Lab

MODES = ("baseline", *cli.ALL_PARK_MODES)
CHAIN = "counter"

Flows = dict[object, list[bytes]]


def per_flow(path: Path) -> Flows:
    """Output frames grouped by flow (the 5-tuple, either direction), each flow in order."""
    flows: Flows = defaultdict(list)
    for f in cli.frame_bytes(path):
        p = cli.parse(f)
        key: object = None
        if p is not None:
            src, dst, sport, dport, proto = p.flow
            key = (proto, *sorted(((src, sport), (dst, dport))))
        flows[key].append(f)
    return dict(flows)


def assert_same_flows(expected: Path, actual: Path) -> None:
    want, got = per_flow(expected), per_flow(actual)
    assert want.keys() == got.keys(), "different flows"
    for k in want:
        assert got[k] == want[k], f"flow {k}: packets differ or are out of order"


def workers_carried(res: cli.Json, n: int) -> list[int]:
    """Packets each of the n workers received (the JSON's ports.worker<q>.rx_packets)."""
    assert res["ports"]["workers"] == n, res["ports"]
    return [res["ports"][f"worker{q}.rx_packets"] for q in range(n)]


@pytest.fixture(scope="module")
def trace(lab: Lab) -> Path:
    return lab.trace(3000, flows=120, seed=5, proto="mix", size="dc")


@pytest.mark.parametrize("mode", MODES)
def test_two_workers_give_one_workers_packets_in_every_mode(lab: Lab, trace: Path,
                                                            mode: str) -> None:
    base_out, base = lab.baseline(trace, CHAIN)
    runs = lab.modes(trace, CHAIN, MODES, extra=("--workers", "2"))
    out, proc = runs[mode]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert res["packets_in"] == res["packets_out"] == 3000, res
    assert sum(res["drops"].values()) == 0, res["drops"]
    assert res["held_at_exit"] == 0
    carried = workers_carried(res, 2)
    assert sum(carried) == 3000 and min(carried) > 600, carried  # 120 flows, both loaded
    assert_same_flows(base_out, out)
    assert cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace)) == 3000
    assert res["nf"]["counter.packets"] == base["nf"]["counter.packets"] == 3000
    assert res["nf"]["counter.bytes"] == base["nf"]["counter.bytes"]
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0 and res["merged"] == res["split"], res
        assert res["bytes_to_nf"] < base["bytes_to_nf"]


@pytest.mark.parametrize("mode", ("payloadpark", "queuemem", "nfslicer"))
def test_three_workers_on_two_cores(lab: Lab, trace: Path, mode: str) -> None:
    base_out, _ = lab.baseline(trace, CHAIN)
    out, proc = lab.modes(trace, CHAIN, (mode,), extra=("--workers", "3"))[mode]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert res["packets_out"] == 3000 and sum(res["drops"].values()) == 0, res
    assert min(workers_carried(res, 3)) > 0
    assert_same_flows(base_out, out)


@pytest.mark.parametrize("mode", ("baseline", "payloadpark", "queuemem"))
def test_nat_with_two_workers_equals_its_baseline(lab: Lab, trace: Path, mode: str) -> None:
    """Each worker's NAT hands out its own ports (core/shard.h), so the output differs from one
    worker's NAT; every mode with two workers gives two workers' baseline, flow by flow."""
    runs = lab.modes(trace, "nat,counter", ("baseline", "payloadpark", "queuemem"),
                     extra=("--workers", "2"))
    base_out, base_proc = runs["baseline"]
    res = cli.result(runs[mode][1])
    cli.assert_accounting(res)
    assert res["nf"]["nat.outbound"] == cli.result(base_proc)["nf"]["nat.outbound"] > 0
    assert_same_flows(base_out, runs[mode][0])


EXT = "198.51.100.1"


def test_nat_replies_reach_the_worker_that_holds_their_mapping(tmp_path: Path) -> None:
    """40 inside hosts open UDP flows; the replies, addressed to the external ports the NAT
    chose, all find their mapping: translated back, none dropped as unmapped."""
    cfg = tmp_path / "nat.toml"
    cfg.write_text(f'[nf.nat]\nexternal = ["{EXT}"]\ninside = ["10.0.0.0/8"]\n')
    ident = iter(range(1, 1 << 16))
    out_ips = [F.ipv4(f"10.0.1.{h}", "203.0.113.7", F.UDP,
                      F.udp(f"10.0.1.{h}", "203.0.113.7", 4000 + h, 53, bytes(400)), next(ident))
               for h in range(1, 41)]
    step1 = [F.eth(ip) for ip in out_ips]
    res = cli.run(F.write_pcap(tmp_path / "out.pcap", step1), tmp_path / "out-x.pcap",
                  "payloadpark", "nat,counter", "--workers", "2", config=cfg)
    assert res["nf"]["nat.outbound"] == 40
    carried = workers_carried(res, 2)
    assert min(carried) > 5, carried  # the flows really are spread
    mapped = {F.parse_ip4(F.ip_of(f) or b"").ident: F.parse_ip4(F.ip_of(f) or b"").sport
              for f in cli.frame_bytes(tmp_path / "out-x.pcap")}
    frames = list(step1)
    for ip in out_ips:
        h = F.parse_ip4(ip)
        port = mapped[h.ident]
        assert isinstance(port, int) and port >= 1024
        frames.append(F.eth(F.ipv4("203.0.113.7", EXT, F.UDP,
                                   F.udp("203.0.113.7", EXT, 53, port, bytes(400)), next(ident))))
    both = F.write_pcap(tmp_path / "both.pcap", frames)
    for mode in ("baseline", "payloadpark"):
        res = cli.run(both, tmp_path / f"both-{mode}.pcap", mode, "nat,counter", "--workers", "2",
                      config=cfg)
        cli.assert_accounting(res)
        assert res["nf"]["nat.inbound"] == 40, res["nf"]
        assert res["nf"].get("nat.drop.no_mapping", 0) == 0, res["nf"]
        back = [F.parse_ip4(ip) for ip in (F.ip_of(f) for f in
                                           cli.frame_bytes(tmp_path / f"both-{mode}.pcap"))
                if ip is not None and F.parse_ip4(ip).src == "203.0.113.7"]
        assert sorted((p.dst, p.dport) for p in back) == \
            sorted((f"10.0.1.{h}", 4000 + h) for h in range(1, 41))


@pytest.mark.parametrize("mode", ("payloadpark", "nfslicer"))
def test_two_processes_with_two_workers_each(lab: Lab, trace: Path, tmp_path: Path,
                                             mode: str) -> None:
    base_out, _ = lab.baseline(trace, CHAIN)
    out = tmp_path / "out.pcap"
    w2 = ("--workers", "2")
    two = cli.two_processes(trace, out, tmp_path / "nf.sock", mode, mode, CHAIN,
                            ("--chain", CHAIN, *w2), w2)
    res = cli.result(two.switch)
    cli.assert_accounting(res)
    assert res["split"] > 0 and res["packets_out"] == 3000, res
    assert min(workers_carried(res, 2)) > 600
    assert sorted(cli.frame_bytes(out)) == sorted(cli.frame_bytes(base_out))
    assert_same_flows(base_out, out)
    assert two.nf_rc == 0, f"nf role exit {two.nf_rc}\n{two.nf_err[-2000:]}"
    nf = json.loads(two.nf_out)
    assert nf["pools_full"] is True, nf
    assert nf["packets_in"] == res["packets_to_nf"], (nf, res)
    assert nf["nf"]["counter.packets"] == 3000, nf
    per = [nf["ports"][f"worker{q}.packets_in"] for q in range(2)]
    assert per == [res["ports"][f"worker{q}.to_nf"] for q in range(2)], (per, res["ports"])


TWO_BY_TWO = ("--workers", "2", "--nf-servers", "2")


@pytest.mark.parametrize("mode", MODES)
def test_two_workers_with_two_nf_servers_in_every_mode(lab: Lab, trace: Path, mode: str) -> None:
    """Each worker has its own link to each of the 2 NF servers (N x M): the packets are one
    worker's baseline, flow by flow; both workers and both servers carried traffic, each worker
    to each server (the worker shard and the server choice are independent), per-server counts
    sum to the totals."""
    base_out, _ = lab.baseline(trace, CHAIN)
    runs = lab.modes(trace, CHAIN, MODES, extra=TWO_BY_TWO)
    out, proc = runs[mode]
    res = cli.result(proc)
    cli.assert_accounting(res)
    assert res["packets_in"] == res["packets_out"] == 3000, res
    assert sum(res["drops"].values()) == 0, res["drops"]
    assert min(workers_carried(res, 2)) > 600
    servers = res["servers"]
    assert len(servers) == 2 and min(s["packets_to"] for s in servers) > 600, servers
    assert sum(s["packets_to"] for s in servers) == res["packets_to_nf"], res
    assert sum(s["packets_from"] for s in servers) == res["packets_from_nf"], res
    for q in range(2):  # worker q's link to each server (nf_server<k> is the sum over workers)
        assert res["ports"][f"worker{q}.to_nf"] > 0
    assert min(res["ports"][f"nf_server{k}.rx_packets"] for k in range(2)) > 600, res["ports"]
    assert_same_flows(base_out, out)
    assert cli.assert_own_payloads(cli.frame_bytes(out), cli.frame_bytes(trace)) == 3000
    if mode in ("payloadpark", "queuemem", "nfslicer"):
        assert res["split"] > 0 and res["merged"] == res["split"], res


def _memif(sock: Path, role: str, n: int) -> str:
    return f"vdev:net_memif{n},role={role},socket={sock},socket-abstract=no"


@pytest.mark.parametrize("mode", ("payloadpark", "nfslicer"))
def test_switch_with_two_workers_and_two_nf_server_processes(lab: Lab, trace: Path,
                                                             tmp_path: Path, mode: str) -> None:
    """--role switch --workers 2 with 2 NF ports (memif, one queue per worker) to two --role nf
    processes with --workers 2 each: the packets are baseline's flow by flow, every NF worker
    served the queue of its switch worker, and every process ends balanced with its pools full."""
    base_out, _ = lab.baseline(trace, CHAIN)
    socks = [tmp_path / f"nf{k}.sock" for k in range(2)]
    out = tmp_path / "out.pcap"
    switch = subprocess.Popen(
        [str(cli.nfpark_bin()), "run", "--role", "switch", "--mode", mode, "--chain", CHAIN,
         "--in", str(trace), "--out", str(out), "--workers", "2", "--nf-servers", "2",
         "--nf-port", _memif(socks[0], "server", 0) + "+" + _memif(socks[1], "server", 1),
         "--nf-dead-after", "0",  # a loaded machine's scheduling is no server failure here
         "--json", "--no-progress", "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    nfs: list[subprocess.Popen[str]] = []
    try:
        deadline = time.monotonic() + 30
        while not all(s.exists() for s in socks):
            assert switch.poll() is None, switch.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the switch never created its memif sockets"
            time.sleep(0.05)
        for s in socks:
            nfs.append(subprocess.Popen(
                [str(cli.nfpark_bin()), "run", "--role", "nf", "--mode", mode, "--chain", CHAIN,
                 "--port", _memif(s, "client", 0), "--workers", "2", "--idle-exit", "2",
                 "--json", "--timeout", "60", "--quiet"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        sw_out, sw_err = switch.communicate(timeout=90)
        ended = [p.communicate(timeout=60) for p in nfs]
    finally:
        for p in (switch, *nfs):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert switch.returncode == 0, sw_err[-2000:] + "".join(e[-1000:] for _, e in ended)
    res = json.loads(sw_out)
    cli.assert_accounting(res)
    assert res["packets_out"] == 3000 and res["split"] > 0, json.dumps(res)
    assert min(workers_carried(res, 2)) > 600
    assert_same_flows(base_out, out)
    for k, (p, (nf_out, nf_err)) in enumerate(zip(nfs, ended, strict=True)):
        assert p.returncode == 0, nf_err[-2000:]
        nf = json.loads(nf_out)
        assert nf["pools_full"] is True, nf
        assert nf["packets_in"] == res["servers"][k]["packets_to"] > 300, (k, nf, res["servers"])
        assert min(nf["ports"][f"worker{q}.packets_in"] for q in range(2)) > 0, nf["ports"]


def test_workers_refuse_what_they_cannot_run_with_one_clear_error(trace: Path,
                                                                   tmp_path: Path) -> None:
    """A live port that offers fewer queues than workers, and an af_packet NF link with workers
    (its frames would come back on the kernel's fanout queue, not the worker that parked them)."""
    pcap = f"vdev:net_pcap0,rx_pcap={trace},tx_pcap={tmp_path / 'a.pcap'}"
    pcap1 = f"vdev:net_pcap1,rx_pcap={trace},tx_pcap={tmp_path / 'b.pcap'}"
    p = cli.nfpark("run", "--traffic", f"{pcap}+{pcap1}", "--workers", "2", "--timeout", "5")
    cli.one_line_error(p, "2 queues", "--workers")
    p = cli.nfpark("run", "--role", "switch", "--in", trace, "--out", tmp_path / "o.pcap",
                   "--workers", "2", "--nf-port", "vdev:net_af_packet0,iface=lo")
    cli.one_line_error(p, "--workers 2", "af_packet NF link", "memif")
