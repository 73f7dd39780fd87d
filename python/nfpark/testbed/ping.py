"""Echoes through the testbed, every reply accounted for by its sequence number.

Why not ping's own loss line. iputils `ping -c N` waits only two round trips after its last
echo (so a reply delayed past that is "lost"), and `ping -c N -w D` keeps sending until N replies
have come back, then counts every echo still on its way as lost: with a path that is slow for a
moment (a loaded machine, a process off its core), both report loss where nothing was lost.
`Ping.all_answered` asks the question a test means: did echoes 1..N each come back (within the
deadline)? Because ping stops as soon as it holds N replies, that is true exactly when the first
N echoes were answered; an echo lost among them leaves a gap that a later one fills.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

_REPLY = re.compile(r"bytes from \S+ icmp_seq=(\d+) ")


@dataclass
class Ping:
    count: int
    answered: list[int]  # sequence numbers of the replies, in arrival order
    stdout: str

    @property
    def all_answered(self) -> bool:
        """Echoes 1..count all came back (later echoes sent while they were delayed may not)."""
        return set(range(1, self.count + 1)) <= set(self.answered)

    @property
    def missing(self) -> list[int]:
        return sorted(set(range(1, self.count + 1)) - set(self.answered))


def ping(ns: str, address: str, count: int, size: int = 56, interval_s: float = 0.2,
         deadline_s: int = 10) -> Ping:
    """Pings `address` from namespace `ns`: `count` echoes of `size` payload bytes, waiting up to
    `deadline_s` for their replies."""
    p = subprocess.run(["ip", "netns", "exec", ns, "ping", "-n", "-c", str(count), "-w",
                        str(deadline_s), "-i", str(interval_s), "-s", str(size), address],
                       capture_output=True, text=True, timeout=deadline_s + 30, check=False)
    return parse(count, p.stdout + p.stderr)


def parse(count: int, output: str) -> Ping:
    """A Ping from ping's output."""
    return Ping(count, [int(m.group(1)) for m in _REPLY.finditer(output)], output)
