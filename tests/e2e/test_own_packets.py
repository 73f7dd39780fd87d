"""Only its own packets are its own (issues 13 and 14, DESIGN §3).

- A header-only capture (snaplen 64-96 B, caplen < wire length) through every mode: the same
  output as baseline, no `bad_token` (NFSlicer lost 44% of such a capture before).
- Ordinary traffic that resembles a parked or sliced packet — DSCP 63, IP length above the
  frame, Ethernet trailers, payloads starting with a tag, a token or the escape token — through
  every mode: the same output as baseline.
- The crafted-packet attack: an ordinary packet whose IP length exceeds its frame and whose
  payload holds the token a victim is about to get arrives just before the victim; it never
  gets the victim's payload — in one process with 9000 B victims and in the two-process memif
  deployment with 1432 B victims. The tokens are the ones the slicer issued before tokens were
  keyed (a fixed seed), so these tests fail on that code; the fix holds whatever the token.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from . import craft
from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
MODES: dict[str, tuple[str, tuple[str, ...]]] = {
    "payloadpark": ("payloadpark", ()),
    "payloadpark-all": ("payloadpark", ("--park-bytes", "all")),
    "payloadpark-7B": ("payloadpark", ("--tag-format", "payloadpark")),
    "queuemem": ("queuemem", ()),
    "nfslicer": ("nfslicer", ()),
    "nicmem": ("nicmem", ()),
    "split": ("split", ()),
}


def check_equals_baseline(lab: Lab, trace: Path, name: str, res: cli.Json, out: Path) -> None:
    base_out, _ = lab.baseline(trace, CHAIN)
    cli.assert_accounting(res)
    assert sum(int(v) for v in res["drops"].values()) == 0, (name, res["drops"])
    if name == "queuemem":  # batch order (docs/queuemem.md)
        cli.assert_same_multiset(base_out, out)
    else:
        cli.assert_same_pcap(base_out, out)


def run_every_mode(lab: Lab, trace: Path) -> None:
    runs = lab.batch(trace, CHAIN, dict(MODES))
    for name, (out, proc) in sorted(runs.items()):
        check_equals_baseline(lab, trace, name, cli.result(proc), out)


def header_only(lab: Lab, tmp_path: Path) -> Path:
    src = lab.trace(3000, flows=100, seed=11, proto="mix", size="dc", ipv6=0.2)
    recs = [(f.data[:64 + (i * 7) % 33], len(f.data)) for i, f in enumerate(cli.read_pcap(src))]
    return craft.write_pcap(tmp_path / "header_only.pcap", recs)


def test_header_only_capture_nfslicer_loses_nothing(lab: Lab, tmp_path: Path) -> None:
    trace = header_only(lab, tmp_path)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "nfslicer", CHAIN)
    assert res["drops"].get("bad_token", 0) == 0, res["drops"]
    check_equals_baseline(lab, trace, "nfslicer", res, out)
    assert res["counters"]["escaped"] > 0.5 * res["packets_in"], res["counters"]


def test_header_only_capture_every_mode_equals_baseline(lab: Lab, tmp_path: Path) -> None:
    run_every_mode(lab, header_only(lab, tmp_path))


def lookalikes(lab: Lab, tmp_path: Path) -> Path:
    """Ordinary frames dressed as parked or sliced ones, eight kinds in turn."""
    src = lab.trace(2400, flows=60, seed=12, proto="mix", size="dc")
    tag = craft.unkeyed_nfpark_tag(index=5, generation=6, orig_len=1500, parked=160)
    recs: list[tuple[bytes, int]] = []
    for i, f in enumerate(cli.read_pcap(src)):
        d, p = f.data, cli.parse(f.data)
        assert p is not None
        room = p.payload_off + 40 <= len(d)
        kind = i % 8
        if kind == 1:
            d = craft.set_dscp(d, 63)
        elif kind == 2:  # IP length above the frame
            d = d[:p.payload_off + 8 + i % 30]
        elif kind == 3:  # Ethernet trailer
            d = d + bytes(4)
        elif kind == 4 and room:  # a predicted token, and short: a header packet's shape
            tok = craft.old_token(i // 8).to_bytes(8, "big")
            d = craft.put_payload(d, tok)[:p.payload_off + 24]
        elif kind == 5 and room:  # the escape token, with an 8-byte trailer
            d = craft.put_payload(d, craft.ESCAPE_TOKEN.to_bytes(8, "big")) + bytes(8)
        elif kind == 6 and room:  # a tag as unkeyed runs wrote them (PayloadPark, QUEUE-MEM)
            d = craft.put_payload(d, tag)
        elif kind == 7 and room:  # DSCP 63, a token, a trailer
            d = craft.set_dscp(craft.put_payload(d, craft.old_token(i).to_bytes(8, "big")), 63)
            d += bytes(8)
        recs.append((d, len(d)))
    return craft.write_pcap(tmp_path / "lookalikes.pcap", recs)


def test_lookalike_traffic_every_mode_equals_baseline(lab: Lab, tmp_path: Path) -> None:
    run_every_mode(lab, lookalikes(lab, tmp_path))


def attack_trace(lab: Lab, tmp_path: Path, victim_size: int, pairs: int) -> Path:
    """(attacker, victim) pairs: each attacker frame is the victim's headers (another source
    port) cut short after 16 payload bytes that start with the token the victim will get."""
    victims = cli.read_pcap(lab.trace(pairs, flows=20, seed=13, proto="mix", size=victim_size))
    recs: list[tuple[bytes, int]] = []
    for k, v in enumerate(victims):
        p = cli.parse(v.data)
        assert p is not None and len(v.data) == victim_size
        l4 = p.l3_off + (20 if p.ipv == 4 else 40)
        a = bytearray(v.data[:p.payload_off + 16])
        a[l4:l4 + 2] = (40000 + k).to_bytes(2, "big")  # the attacker's own flow
        a[p.payload_off:p.payload_off + 8] = craft.old_token(k).to_bytes(8, "big")
        recs += [(bytes(a), len(a)), (v.data, len(v.data))]
    return craft.write_pcap(tmp_path / f"attack{victim_size}.pcap", recs)


def check_no_foreign_payload(lab: Lab, trace: Path, out: Path, res: cli.Json) -> None:
    frames = cli.frame_bytes(out)
    sent = cli.frame_bytes(trace)
    with_id = [f for f in frames if cli.payload_id(f) is not None]
    assert cli.assert_own_payloads(with_id, sent) == len(sent) // 2, "every victim, intact"
    assert res["counters"]["spliced"] == len(sent) // 2, res["counters"]
    base_out, _ = lab.baseline(trace, CHAIN)
    assert frames == cli.frame_bytes(base_out), cli.first_difference(cli.frame_bytes(base_out),
                                                                      frames)


def test_crafted_token_attack_one_process_9000B_victims(lab: Lab, tmp_path: Path) -> None:
    trace = attack_trace(lab, tmp_path, 9000, 200)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "nfslicer", CHAIN)
    cli.assert_accounting(res)
    check_no_foreign_payload(lab, trace, out, res)


def test_crafted_token_attack_two_processes_1432B_victims(lab: Lab, tmp_path: Path) -> None:
    trace = attack_trace(lab, tmp_path, 1432, 400)
    sock = Path(f"/tmp/nfpark-own-{os.getpid()}.sock")  # short and unique: memif's path limit
    nf = subprocess.Popen(
        [str(cli.nfpark_bin()), "run", "--role", "nf", "--mode", "nfslicer", "--chain", CHAIN,
         "--port", f"vdev:net_memif0,role=server,socket={sock}", "--idle-exit", "2", "--json",
         "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
        out = tmp_path / "out.pcap"
        sw = cli.nfpark("run", "--role", "switch", "--mode", "nfslicer", "--in", trace, "--out",
                        out, "--nf-port", f"vdev:net_memif0,role=client,socket={sock}",
                        "--json", "--no-progress", "--timeout", "60")
        nf.communicate(timeout=60)
    finally:
        if nf.poll() is None:
            nf.kill()
            nf.wait()
        sock.unlink(missing_ok=True)
    res = cli.result(sw)
    cli.assert_accounting(res)
    assert nf.returncode == 0
    frames = cli.frame_bytes(out)
    sent = cli.frame_bytes(trace)
    with_id = [f for f in frames if cli.payload_id(f) is not None]
    assert cli.assert_own_payloads(with_id, sent) == len(sent) // 2, "every victim, intact"
    # Whole packets that come back from another process keep their bytes: compare as sets.
    assert sorted(frames) == sorted(cli.frame_bytes(lab.baseline(trace, CHAIN)[0]))


KEY = "00" * 16


@pytest.mark.parametrize("args", [["--secret", "xyz"], ["--mode", "nfslicer", "--tag-key", KEY],
                                  ["--mode", "split", "--tag-key", KEY]],
                         ids=["bad-secret", "nfslicer-tag-key", "split-tag-key"])
def test_secret_and_tag_key_errors(lab: Lab, tmp_path: Path, args: list[str]) -> None:
    p = cli.nfpark("run", "--in", lab.trace(100), "--out", tmp_path / "o.pcap", "--no-progress",
                   *args)
    cli.one_line_error(p, "--secret" if args[0] == "--secret" else "--tag-key")


def test_given_secret_makes_runs_reproducible(lab: Lab, tmp_path: Path) -> None:
    trace = lab.trace(2000, flows=50, seed=14, size="dc", proto="mix")
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    secret = ["--secret", "0123456789abcdef0123456789abcdef"]
    ra = cli.run(trace, a, "nfslicer", CHAIN, *secret)
    rb = cli.run(trace, b, "nfslicer", CHAIN, *secret)
    assert ra["counters"] == rb["counters"]
    assert cli.frame_bytes(a) == cli.frame_bytes(b)
