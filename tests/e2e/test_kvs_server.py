"""`nfpark kvs` where it goes beyond (or differs from) memcached, and its command line:
 - a request never leaves a buffer waiting: a short data block or a too-large value gets its
   error at once and the next request is served normally (memcached would read the next
   datagram as data);
 - a 1 MiB value is SET with a multi-datagram request (an extension: memcached drops those)
   and comes back as 754 datagrams, zero-copy from the hot region;
 - bad command lines get one clear error line and exit 2."""

from __future__ import annotations

import json
import struct

from . import kvs_lab as lab
from . import nfpark_cli as cli


def bodies(replies: list[bytes]) -> list[bytes]:
    return [r[8:] for r in replies]


@lab.needs_root
def test_no_request_leaves_a_buffer_waiting() -> None:
    with lab.netns():
        kvs = lab.Kvs()
        try:
            got = lab.client(kvs.addr, [
                b"set a 0 0 5\r\nab\r\n", b"get a\r\n",
                b"set a 0 0 1\r\n1\r\nset a 0 0 2000000\r\nabc\r\n", b"get a\r\n",
                b"stats\r\n", b"incr a 1\r\n", b"get a\r\n"])
        finally:
            res = kvs.stop()
    assert [bodies(r) for r in got] == [
        [b"CLIENT_ERROR bad data chunk\r\n"], [b"END\r\n"],
        [b"STORED\r\n", b"SERVER_ERROR object too large for cache\r\n"], [b"END\r\n"],
        [b"ERROR\r\n"], [b"ERROR\r\n"], [b"END\r\n"]]
    c = res["counters"]
    assert c["client_errors"] == 1 and c["server_errors"] == 1 and c["errors"] == 2
    assert c["malformed"] == 4


@lab.needs_root
def test_one_megabyte_value_in_and_out_zero_copy() -> None:
    value = bytes(range(256)) * 4096  # 1 MiB
    req = b"set blob 9 0 %d\r\n" % len(value) + value + b"\r\n"
    parts = [req[i:i + 1392] for i in range(0, len(req), 1392)]
    with lab.netns():
        kvs = lab.Kvs("--hot-keys", "blob")
        try:
            got = lab.client(kvs.addr, [(p, i, len(parts)) for i, p in enumerate(parts)] +
                             [b"get blob\r\n"], timeout=10)
        finally:
            res = kvs.stop()
    assert bodies(got[len(parts) - 1]) == [b"STORED\r\n"]
    replies = got[-1]
    stream = b"VALUE blob 9 1048576\r\n" + value + b"\r\nEND\r\n"
    assert len(replies) == (len(stream) + 1391) // 1392 == 754
    for i, r in enumerate(replies):
        rid, seq, total, zero = struct.unpack(">HHHH", r[:8])
        assert rid == len(parts) + 1
        assert (seq, total, zero) == (i, 754, 0)
    assert b"".join(bodies(replies)) == stream
    c = res["counters"]
    assert c["assembled"] == 1 and c["hot_hits"] == 1
    assert c["bytes_zero_copy"] >= len(value) and c["zero_copy_datagrams"] == 754


def test_bad_command_lines_get_one_clear_error() -> None:
    cases = [
        ((), ("--port", "--tap")),
        (("--tap", "kvs0"), ("--tap", "NAME ADDR/PREFIX")),
        (("--tap", "kvs0", "10.1.2.3"), ("--tap", "ADDR/PREFIX")),
        (("--tap", "kvs0", "10.1.2.3/24", "--ip", "10.9.9.9"), ("--ip", "10.1.2.3/24")),
        (("--port", "vdev:net_null0"), ("--ip",)),
        (("--port", "vdev:net_null0", "--ip", "10.0.0.1", "--log-mb", "1"), ("--log-mb",)),
        (("--port", "vdev:net_null0", "--ip", "10.0.0.1", "--hot-keys", "a,,b"), ("--hot-keys",)),
        (("--bogus",), ("--bogus",)),
    ]
    for args, names in cases:
        cli.one_line_error(cli.nfpark("kvs", *args), *names)
    assert "--hot-keys" in cli.ok("kvs", "--help")


def test_any_port_accounts_for_every_frame() -> None:
    """On a port that floods it with junk (net_null delivers 64-byte frames of zeros), every
    frame is counted as handled or dropped by reason, and every mbuf comes back."""
    p = cli.nfpark("kvs", "--port", "vdev:net_null0", "--ip", "10.0.0.1", "--timeout", "1",
                   "--mbufs", "4096", "--hot-mb", "8", "--log-mb", "8", "--json")
    assert p.returncode == 0, cli.describe(p)
    res = json.loads(p.stdout)
    c = res["counters"]
    assert res["balanced"] and res["pools_full"]
    assert c["rx_frames"] > 1000 and c["rx_frames"] == c["drop.not_ipv4"]
