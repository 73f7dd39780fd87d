"""Shared set-up for the KVS end-to-end tests: a network namespace of the test's own (its name
carries the process id, so two checkouts can test at once), `nfpark kvs` on a TAP interface
inside it, stock memcached on the namespace's loopback, and the UDP client that runs there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from . import nfpark_cli as cli

TAG = f"{os.getpid() % 100000:05d}"
NETNS = f"nfkvs{TAG}"
TAP = f"kvs{TAG}"
TAP_ADDR = "10.77.0.1/24"
SERVER_IP = "10.77.0.2"
KVS_PORT = 11211
MEMCACHED_PORT = 11311
CLIENT = Path(__file__).with_name("kvs_udp_client.py")

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip"),
    reason="needs root and iproute2 (a network namespace and a TAP interface)",
)

Request = tuple[bytes, int, int]  # body, sequence number, datagram count


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=30)


def in_ns(*args: str) -> list[str]:
    return ["ip", "netns", "exec", NETNS, *args]


@contextmanager
def netns() -> Iterator[None]:
    sh("ip", "netns", "del", NETNS, check=False)
    sh("ip", "netns", "add", NETNS)
    try:
        sh(*in_ns("ip", "link", "set", "lo", "up"))
        yield
    finally:
        sh("ip", "netns", "del", NETNS, check=False)


def client(server: tuple[str, int], requests: Sequence[bytes | Request],
           timeout: float = 3.0) -> list[list[bytes]]:
    """Sends each request (one datagram, or one datagram of a multi-datagram request) and
    returns the reply datagrams of each, frame header included."""
    reqs: list[list[Any]] = []
    for i, r in enumerate(requests):
        body, seq, total = (r, 0, 1) if isinstance(r, bytes) else r
        rid = i + 1 if isinstance(r, bytes) else 40000
        reqs.append([rid, body.hex(), seq, total])
    spec = {"server": list(server), "requests": reqs, "timeout": timeout}
    py = str(cli.REPO / ".venv" / "bin" / "python")
    p = subprocess.run(in_ns(py if os.path.exists(py) else "python3", str(CLIENT)),
                       input=json.dumps(spec), capture_output=True, text=True, timeout=600,
                       check=False)
    assert p.returncode == 0, p.stderr[-2000:]
    return [[bytes.fromhex(h) if h != "timeout" else b"timeout" for h in r]
            for r in json.loads(p.stdout)]


def wait_ready(server: tuple[str, int], what: str, proc: subprocess.Popen[str]) -> None:
    for _ in range(100):
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited: {proc.communicate()[1][-2000:]}")
        if client(server, [b"version\r\n"], timeout=0.1)[0] != [b"timeout"]:
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} never answered `version`")


def memcached_version() -> str:
    return sh("memcached", "-V").stdout.split()[-1]


@contextmanager
def memcached() -> Iterator[tuple[str, int]]:
    proc = subprocess.Popen(in_ns("memcached", "-U", str(MEMCACHED_PORT), "-p", "0", "-l",
                                  "127.0.0.1", "-u", "nobody", "-t", "1", "-m", "64"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    addr = ("127.0.0.1", MEMCACHED_PORT)
    try:
        wait_ready(addr, "memcached", proc)
        yield addr
    finally:
        proc.kill()
        proc.communicate(timeout=10)


class Kvs:
    """`nfpark kvs` on a TAP interface in the namespace; stop() returns its JSON result."""

    def __init__(self, *flags: str) -> None:
        cmd = in_ns(str(cli.nfpark_bin()), "kvs", "--tap", TAP, TAP_ADDR, "--ip", SERVER_IP,
                    "--json", "--timeout", "300", "--hot-mb", "16", "--log-mb", "16",
                    "--mbufs", "4096", *flags)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.addr = (SERVER_IP, KVS_PORT)
        wait_ready(self.addr, "nfpark kvs", self.proc)

    def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err[-2000:]
        res: dict[str, Any] = json.loads(out)
        assert res["balanced"] and res["pools_full"], res
        return res

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=30)
