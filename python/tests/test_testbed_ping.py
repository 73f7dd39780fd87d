"""`nfpark.testbed.ping`: replies accounted for by sequence number, not ping's loss line."""

from __future__ import annotations

from nfpark.testbed.ping import parse

# The memif testbed on a loaded CI machine (2026-11-24): the path stalled ~1.5 s, ping -c 3 -w 10
# kept sending until 3 replies were back and called the 3 still on their way lost.
DELAYED = """PING 198.18.0.2 (198.18.0.2) 1472(1500) bytes of data.
1480 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=60.1 ms
1480 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=1525 ms
1480 bytes from 198.18.0.2: icmp_seq=3 ttl=64 time=1321 ms
1480 bytes from 198.18.0.2: icmp_seq=4 ttl=64 time=1117 ms
1480 bytes from 198.18.0.2: icmp_seq=5 ttl=64 time=913 ms
1480 bytes from 198.18.0.2: icmp_seq=6 ttl=64 time=709 ms

--- 198.18.0.2 ping statistics ---
9 packets transmitted, 6 received, 33.3333% packet loss, time 1718ms
"""


def test_delayed_replies_are_answered_echoes() -> None:
    p = parse(3, DELAYED)
    assert p.answered == [1, 2, 3, 4, 5, 6]
    assert p.all_answered and p.missing == []


def test_a_lost_echo_is_a_gap_later_replies_do_not_fill() -> None:
    out = "\n".join(f"64 bytes from 10.0.0.2: icmp_seq={s} ttl=64 time=0.1 ms" for s in (1, 3, 4))
    p = parse(3, out + "\n")
    assert not p.all_answered and p.missing == [2]


def test_no_reply_and_duplicates() -> None:
    assert parse(2, "PING x\n\n2 packets transmitted, 0 received, 100% packet loss\n").missing \
        == [1, 2]
    dup = ("64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.1 ms\n"
           "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.2 ms (DUP!)\n")
    p = parse(2, dup)
    assert p.answered == [1, 1] and p.missing == [2]
