"""`scripts/testbed_report.sh`: real programs through the testbed in every mode, as a table.

For a Linux bridge (no nfpark: what the veth path alone gives), baseline and every parking
mode, one testbed each: iperf3 TCP (4 streams) and UDP, curl downloading a generated file
checked by sha256, ping with 1472 B payloads; then nfpark's counters from its result. Prints a
Markdown table (docs/testbed.md, Results) and writes the raw numbers as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nfpark.testbed import net


def _in(ns: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def _iperf3(tb: net.Testbed, seconds: int, *args: str) -> dict[str, Any]:
    srv = subprocess.Popen(["ip", "netns", "exec", tb.ns("server"), "iperf3", "-s", "-1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    c = _in(tb.ns("client"), "iperf3", "-c", net.SERVER_IP, "-t", str(seconds), "--json", *args)
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
    return dict(json.loads(c.stdout)) if c.stdout.strip().startswith("{") else {}


def _download(tb: net.Testbed, mb: int, tmp: Path) -> tuple[float, bool]:
    www = tmp / "www"
    www.mkdir(exist_ok=True)
    blob = www / "blob.bin"
    if not blob.exists():
        with blob.open("wb") as f:
            for i in range(mb):
                f.write(hashlib.shake_256(i.to_bytes(4, "big")).digest(1 << 20))
    want = hashlib.sha256(blob.read_bytes()).hexdigest()
    http = subprocess.Popen(["ip", "netns", "exec", tb.ns("server"), "python3", "-m",
                             "http.server", "8080", "--bind", net.SERVER_IP, "-d", str(www)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        got = tmp / "got.bin"
        for _ in range(50):
            t0 = time.monotonic()
            c = _in(tb.ns("client"), "curl", "-sS", "--max-time", "280", "-o", str(got),
                    f"http://{net.SERVER_IP}:8080/blob.bin")
            if c.returncode != 7:
                break
            time.sleep(0.1)
        secs = time.monotonic() - t0
        ok = c.returncode == 0 and hashlib.sha256(got.read_bytes()).hexdigest() == want
        return secs, ok
    finally:
        http.kill()
        http.wait()


def _ping(tb: net.Testbed) -> float | None:
    p = _in(tb.ns("client"), "ping", "-c", "20", "-i", "0.1", "-s", "1472", net.SERVER_IP)
    for line in p.stdout.splitlines():
        if line.startswith("rtt"):
            return float(line.split("=")[1].split("/")[1])
    return None


def measure(mode: str, seconds: int, mb: int, tmp: Path) -> dict[str, object]:
    tb_id = f"r{os.getpid() % 100000}"
    tb = net.up(tb_id, mode)
    row: dict[str, object] = {"mode": mode}
    try:
        tcp = _iperf3(tb, seconds, "-P", "4")
        end = tcp.get("end", {})
        row["tcp_mbps"] = end.get("sum_received", {}).get("bits_per_second", 0) / 1e6
        row["tcp_retransmits"] = end.get("sum_sent", {}).get("retransmits")
        udp = _iperf3(tb, max(2, seconds // 2), "-u", "-b", "200M", "-l", "1400")
        usum = udp.get("end", {}).get("sum", {})
        row["udp_mbps"] = usum.get("bits_per_second", 0) / 1e6
        row["udp_lost_pct"] = usum.get("lost_percent")
        row["ping_ms"] = _ping(tb)
        secs, ok = _download(tb, mb, tmp)
        row["download_s"], row["download_sha256_ok"] = secs, ok
    finally:
        res = net.down(tb_id)
    sw: dict[str, Any] | None = res.get("switch")
    if sw:
        row.update({k: sw.get(k) for k in ("packets_in", "packets_out", "split", "merged",
                                           "bytes_to_nf", "bytes_in", "balanced",
                                           "pools_full")})
        row["drops"] = {k: v for k, v in sw.get("drops", {}).items() if v}
    return row


def table(rows: list[dict[str, object]]) -> str:
    out = ["| mode | TCP Mb/s (4 streams) | TCP retrans. | UDP offered Mb/s (loss %) "
           "| ping 1472 B ms | download s (sha256) | split / merged | NF-link bytes / in | drops "
           "| balanced, pools |",
           "|---|---|---|---|---|---|---|---|---|---|"]

    def f(v: object, fmt: str) -> str:
        return format(v, fmt) if isinstance(v, (int, float)) else "—"

    for r in rows:
        ratio = (f(int(r["bytes_to_nf"]) / int(r["bytes_in"]), ".2f")  # type: ignore[call-overload]
                 if r.get("bytes_in") else "—")
        out.append(
            f"| {r['mode']} | {f(r.get('tcp_mbps'), '.0f')} | {r.get('tcp_retransmits', '—')} "
            f"| {f(r.get('udp_mbps'), '.0f')} ({f(r.get('udp_lost_pct'), '.1f')}) "
            f"| {f(r.get('ping_ms'), '.2f')} | {f(r.get('download_s'), '.1f')} "
            f"({'ok' if r.get('download_sha256_ok') else 'BAD'}) "
            f"| {r.get('split', '—')} / {r.get('merged', '—')} | {ratio} "
            f"| {r.get('drops') or '—'} | {r.get('balanced', '—')}, {r.get('pools_full', '—')} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed_report", description=__doc__)
    ap.add_argument("--seconds", type=int, default=10, help="iperf3 TCP seconds (10)")
    ap.add_argument("--mb", type=int, default=100, help="download size in MB (100)")
    ap.add_argument("--modes", default=",".join((net.BRIDGE, *net.MODES)))
    ap.add_argument("--json", type=Path, help="write the raw rows here")
    a = ap.parse_args(argv)
    if missing := net.missing_tools():
        print("testbed_report: needs " + ", ".join(missing), file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="nfpark-testbed-") as tmp:
        for mode in a.modes.split(","):
            print(f"testbed_report: {mode} ...", file=sys.stderr)
            rows.append(measure(mode, a.seconds, a.mb, Path(tmp)))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
