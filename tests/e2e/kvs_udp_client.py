"""A memcached UDP client for the KVS end-to-end tests, run inside the test's network namespace
(`ip netns exec NS python kvs_udp_client.py`): reads {"server": [host, port], "requests":
[[id, hex, seq, total], ...]} as JSON on stdin and prints, for each request, the reply
datagrams (hex) it received, in arrival order, as a JSON list of lists.

After each request it sends a `version` sentinel with request id 65535 and reads until the
sentinel's reply: every reply to the request came before it (one server, one path, in order),
so no timing guess decides where one request's replies end."""

from __future__ import annotations

import json
import socket
import struct
import sys

SENTINEL = 65535


def main() -> int:
    spec = json.load(sys.stdin)
    server = (spec["server"][0], int(spec["server"][1]))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE: a 1 MB value is 754 datagrams
    s.settimeout(float(spec.get("timeout", 3.0)))
    out: list[list[str]] = []
    for rid, body_hex, seq, total in spec["requests"]:
        try:
            s.sendto(struct.pack(">HHHH", rid, seq, total, 0) + bytes.fromhex(body_hex), server)
            if seq + 1 < total:  # more datagrams of a multi-datagram request follow
                out.append([])
                continue
            s.sendto(struct.pack(">HHHH", SENTINEL, 0, 1, 0) + b"version\r\n", server)
        except OSError:  # no route yet (the server's interface is still coming up)
            out.append(["timeout"])
            continue
        got: list[str] = []
        while True:
            try:
                d, _ = s.recvfrom(65536)
            except TimeoutError:
                got.append("timeout")
                break
            if len(d) >= 2 and struct.unpack(">H", d[:2])[0] == SENTINEL:
                break
            got.append(d.hex())
        out.append(got)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
