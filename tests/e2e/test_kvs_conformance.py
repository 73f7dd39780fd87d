"""`nfpark kvs` against stock memcached: the same request sequence — well-formed, malformed,
multi-gets, values over several datagrams, hot (zero-copy) and cold items — sent over UDP to
`memcached -U` on the namespace's loopback and to `nfpark kvs` over a TAP interface must get
the same reply datagrams, byte for byte (frame headers, CAS uniques and the version string
included: nfpark is given memcached's version to answer with).

Left out on purpose, because memcached's answer is not a reply but a stuck connection (it reads
the next datagrams as data): a data block shorter than declared, and a value too large for the
cache; test_kvs_server.py checks what nfpark does instead."""

from __future__ import annotations

import shutil

import pytest

from . import kvs_lab as lab

pytestmark = [
    lab.needs_root,
    pytest.mark.skipif(not shutil.which("memcached"),
                       reason="memcached is not installed (scripts/setup.sh installs it)"),
]

K251 = b"k" * 251


def sequence() -> list[bytes]:
    big, y1370, y1371 = b"x" * 5000, b"y" * 1370, b"z" * 1371
    return [
        b"version\r\n", b"get a\r\n", b"set a 5 0 3\r\nabc\r\n", b"get a b a\r\n",
        b"get b a b\r\n", b"gets a\r\n", b"set a 0 0 3\r\nabcd\r\n", b"bogus\r\n", b"get\r\n",
        b"get a", b"",
        # malformed storage commands and keys
        b"get " + K251 + b"\r\n", b"set " + K251 + b" 0 0 1\r\nx\r\n",
        b"delete " + K251 + b"\r\n", b"get " + b" ".join(b"m%d" % i for i in range(30)) + b"\r\n",
        b"set a abc 0 1\r\nx\r\n", b"set a -1 0 1\r\nx\r\n",
        b"set f 4294967296 0 1\r\nx\r\nget f\r\n",
        b"set a 0 0 -1\r\nx\r\n", b"set a 0 0 abc\r\nx\r\n", b"set a 0 0\r\n",
        b"set a 0 0 1 noreply x\r\nx\r\n", b"set n 0 0 3 noreply\r\nabc\r\nget n\r\n",
        b"set a 0 0 3 noreply\r\nabcd\r\n", b"set a 0 0 4294967299\r\nabc\r\nget a\r\n",
        b"set a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24\r\n",
        # delete, add, replace, expiry, odd whitespace
        b"delete a 0\r\n", b"delete a\r\n", b"delete n noreply\r\n", b"delete a 1\r\n",
        b"delete a b c\r\n", b"delete\r\n",
        b"add d 0 0 1\r\n1\r\nadd d 0 0 1\r\n2\r\nreplace d 0 0 1\r\n3\r\n"
        b"replace zz 0 0 1\r\n4\r\nget d zz\r\n",
        b"set e 0 -1 1\r\nx\r\nget e\r\n", b"set z 0 0 0\r\n\r\nget z\r\n", b"GET d\r\n",
        b"  get   d    z  \r\n", b"\r\n", b"\n", b"get d\n", b"get d\x00z\r\n", b"ge\rt d\r\n",
        # hot items (pinned, then promoted by frequency) with values over several datagrams
        b"set hot1 7 0 5000\r\n" + big + b"\r\n", b"get hot1\r\n", b"get hot1 hot1 d\r\n",
        b"gets hot1\r\n", b"set hot1 8 0 1370\r\n" + y1370 + b"\r\nget hot1\r\n",
        b"gets hot1 d z\r\n", b"set b3 0 0 1371\r\n" + y1371 + b"\r\n", b"get b3 b3\r\n",
        b"get b3\r\n", b"get b3 b3 b3\r\n", b"gets b3 d\r\n",
        # CAS, culling, flush windows
        b"version\r\nset c 0 0 1\r\n1\r\nget c " + K251 + b" c\r\nversion\r\n", b"gets c\r\n",
        b"cas c 0 0 1 99\r\nq\r\n", b"cas nope 0 0 1 3\r\nq\r\n", b"cas c 0 0 1\r\nq\r\n",
        b"cas c 0 0 1 abc\r\nq\r\n", b"get b\r\nget b b\r\n", b"set x 0 0 1\r\n1\r\nget b b\r\n",
        b"version\r\n" * 21 + b"get b b\r\n", b"version\r\n" * 22 + b"get b b\r\n",
        b"version\r\n" + b"x" * 3000, b"version\r\nget " + b"k " * 1500,
        b"version\r\nGET / HTTP/1.1\r\nversion\r\n", b"quit\r\n", b"version\r\nquit\r\nversion\r\n",
        b"bget d b3\r\n", b"gets a b c d e f hot1 b3 x z\r\n",
    ]


@pytest.mark.parametrize("zero_copy", [True, False], ids=["zero-copy", "copy"])
def test_replies_match_memcached_byte_for_byte(zero_copy: bool) -> None:
    with lab.netns():
        with lab.memcached() as mc:
            want = lab.client(mc, sequence())
        kvs = lab.Kvs("--hot-keys", "hot1", "--promote-min", "2", "--version-string",
                      lab.memcached_version(), *([] if zero_copy else ["--no-zero-copy"]))
        try:
            got = lab.client(kvs.addr, sequence())
        finally:
            if kvs.proc.poll() is None:
                res = kvs.stop()
            else:
                kvs.kill()
    reqs = sequence()
    assert len(got) == len(want) == len(reqs)
    for req, g, w in zip(reqs, got, want, strict=True):
        assert b"timeout" not in w, f"memcached did not answer {req[:60]!r}"
        assert g == w, f"request {req[:80]!r}:\n  memcached: {w!r}\n  nfpark:    {g!r}"
    c = res["counters"]
    assert res["zero_copy"] == zero_copy
    if zero_copy:  # the comparison covered zero-copy replies and the stable/pending swap
        assert c["hot_hits"] > 0 and c["bytes_zero_copy"] > 0 and c["zero_copy_datagrams"] > 0
        assert c["stable_to_pending"] >= 1 and c["pending_to_stable"] >= 1
    else:
        assert c["bytes_zero_copy"] == 0 and c["hot_items"] == 0
    assert c["bytes_copied"] > 0
    assert c["malformed"] >= 20 and c["refs_in_flight"] == 0 and c["stale_releases"] == 0
    assert c["reassembled"] >= 2, "5000-byte SETs crossed the 1500-byte TAP as fragments"
    assert c["arp_replies"] >= 1
