"""`nfpark trace gen|stats|reorder` as a user drives them: round trips, help, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import nfpark_cli as cli


@pytest.mark.parametrize("proto", ["udp", "tcp", "mix"])
def test_gen_stats_round_trip(tmp_path: Path, proto: str) -> None:
    out = cli.gen(tmp_path / "t.pcap", 3000, flows=150, size=512, slf=4, proto=proto, seed=7)
    s = cli.stats(out)
    assert s["packets"] == 3000
    assert s["flows"] == 150
    assert s["slf"] == pytest.approx(4.0, abs=0.05)
    assert s["counts"]["with_id"] == 3000
    assert s["ipv4"] == pytest.approx(1.0)
    assert s["ipv6"] == pytest.approx(0.0)
    want_tcp = {"udp": 0.0, "tcp": 1.0, "mix": 0.5}[proto]
    assert s["tcp"] == pytest.approx(want_tcp, abs=0.15)
    assert s["tcp"] + s["udp"] == pytest.approx(1.0, abs=1e-3)
    # 512 B frames: every frame is 512 B (TCP needs only 66 B, so no raising).
    assert s["mean_size"] == pytest.approx(512.0)
    assert s["bytes"] == 3000 * 512
    # Our own reader agrees with stats on count and bytes, and every frame carries its id in
    # the payload head and the IPv4 identification.
    frames = cli.read_pcap(out)
    assert len(frames) == 3000
    assert sum(f.wire_len for f in frames) == s["bytes"]
    for i, f in enumerate(frames):
        got = cli.payload_id(f.data)
        assert got is not None, f"packet {i} has no id"
        parsed, pid = got
        assert pid == i
        assert parsed.header_id == i & 0xFFFF


def test_gen_dc_sizes_and_ipv6_share(tmp_path: Path) -> None:
    out = cli.gen(tmp_path / "dc.pcap", 20000, flows=400, size="dc", proto="mix", ipv6=0.5,
                  seed=3)
    s = cli.stats(out)
    assert s["packets"] == 20000
    assert s["flows"] == 400
    # dc: bimodal, mean 882 B (docs/traces.md); IPv6/TCP minimums shift it a little upwards.
    assert s["mean_size"] == pytest.approx(882, abs=15)
    assert s["ipv6"] == pytest.approx(0.5, abs=0.12)
    assert s["ipv4"] + s["ipv6"] == pytest.approx(1.0, abs=1e-3)
    assert s["tcp"] == pytest.approx(0.5, abs=0.12)
    # 30% of packets are small (< 160 B of payload): frames of at most 192 + 40 (IPv6 headers).
    frames = cli.read_pcap(out)
    small = sum(1 for f in frames if f.wire_len <= 232)
    assert small / len(frames) == pytest.approx(0.30, abs=0.02)
    assert min(f.wire_len for f in frames) >= 64
    assert max(f.wire_len for f in frames) <= 1518


def test_gen_is_deterministic_and_seed_matters(tmp_path: Path) -> None:
    a = cli.gen(tmp_path / "a.pcap", 2000, flows=50, size="imix", seed=11)
    b = cli.gen(tmp_path / "b.pcap", 2000, flows=50, size="imix", seed=11)
    c = cli.gen(tmp_path / "c.pcap", 2000, flows=50, size="imix", seed=12)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_gen_vlan_frames_carry_one_tag(tmp_path: Path) -> None:
    out = cli.gen(tmp_path / "v.pcap", 2000, flows=40, size=300, vlan=True)
    for f in cli.read_pcap(out):
        assert f.data[12:14] == b"\x81\x00"
        assert f.data[16:18] in (b"\x08\x00", b"\x86\xdd")
        assert 1 <= int.from_bytes(f.data[14:16], "big") & 0x0FFF <= 4094
    assert cli.stats(out)["flows"] == 40


def test_reorder_of_a_file_against_itself(tmp_path: Path) -> None:
    out = cli.gen(tmp_path / "t.pcap", 4000, flows=100, size="dc", proto="mix")
    r = cli.reorder(out, out)
    assert r["match"] == "packet_id"
    assert r["sent"] == r["received"] == r["matched"] == 4000
    assert r["lost"] == r["duplicated"] == r["unmatched"] == r["reordered"] == 0
    assert r["out_of_order_pct"] == 0
    assert r["reordering_extent_max"] == 0


@pytest.mark.parametrize("name", cli.REAL_TRACES)
def test_real_captures_are_readable(name: str) -> None:
    path = cli.DATA / name
    assert path.is_file(), f"shared trace missing: {path}"
    expected = {"tcpreplay_test.pcap": (179, 386), "slips_test7-malicious.pcap": (2000, 153)}
    packets, mean = expected[name]
    s = cli.stats(path)
    assert s["packets"] == packets
    assert s["mean_size"] == pytest.approx(mean, abs=1.5)
    assert s["flows"] > 10
    assert s["ipv4"] > 0.5 and s["ipv6"] > 0, s
    assert s["tcp"] > 0 and s["udp"] > 0, s
    frames = cli.read_pcap(path)
    assert len(frames) == packets
    assert sum(f.wire_len for f in frames) == s["bytes"]
    r = cli.reorder(path, path)  # no ids: matched by frame hash
    assert r["match"] == "frame_hash"
    assert r["lost"] == r["unmatched"] == r["reordered"] == 0


@pytest.mark.parametrize("verb", [[], ["trace"], ["trace", "gen"], ["trace", "stats"],
                                  ["trace", "reorder"], ["run"]])
def test_help_exits_zero(verb: list[str]) -> None:
    p = cli.nfpark(*verb, "--help")
    assert p.returncode == 0, cli.describe(p)
    assert "usage" in p.stdout.lower() or "--" in p.stdout, cli.describe(p)


def test_gen_help_lists_its_options() -> None:
    text = cli.ok("trace", "gen", "--help")
    for opt in ("--out", "--packets", "--flows", "--size", "--slf", "--proto", "--seed",
                "--active", "--ipv6", "--vlan", "--flow-sizes", "--pace", "--train", "--copies",
                "--copy-shift-us"):
        assert opt in text, opt


def test_gen_paper_traffic_many_flows(tmp_path: Path) -> None:
    """Issue 17's traffic: 4 copies x 25k live flows (100k active at once), heavy-tailed sizes,
    paced trains of mean 1.2 (input SLF ~1.2). (reframe_chain_bench generates its 1M+ flows in
    memory with the same generator.)"""
    out = cli.gen(tmp_path / "p.pcap", 150_000, flows=25_000, active=25_000, copies=4,
                  copy_shift_us=5, pace=True, train=1.2, flow_sizes="pareto:1.3",
                  rate_gbps=100, seed=9)
    s = cli.stats(out)
    assert s["packets"] == 4 * 150_000
    assert s["flows"] == 100_000  # every flow of the 4 x 25k went live (at once)
    assert s["slf"] == pytest.approx(1.2, abs=0.06)
    # Heavy tails: the largest flow is hundreds of times the mean (6 packets).
    assert s["max_flow_packets"] > 1000


def test_gen_paper_traffic_is_deterministic(tmp_path: Path) -> None:
    opts: dict[str, str | int | float | bool] = dict(
        flows=3000, active=500, copies=3, copy_shift_us=20, pace=True, train=1.5,
        flow_sizes="lognormal:1.5", seed=4)
    a = cli.gen(tmp_path / "a.pcap", 20_000, **opts)
    b = cli.gen(tmp_path / "b.pcap", 20_000, **opts)
    c = cli.gen(tmp_path / "c.pcap", 20_000, **{**opts, "seed": 5})
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    assert cli.stats(a)["packets"] == 60_000


@pytest.mark.parametrize("args,named", [
    (["--pace"], "--pace"),
    (["--flow-sizes", "pareto:0.9", "--active", "5"], "--flow-sizes"),
    (["--copies", "0"], "--copies"),
    (["--train", "0.5", "--active", "5", "--pace"], "--train"),
])
def test_gen_paper_traffic_bad_options(tmp_path: Path, args: list[str], named: str) -> None:
    p = cli.nfpark("trace", "gen", "--out", tmp_path / "x.pcap", *args)
    cli.one_line_error(p, named)


def test_stats_nonexistent_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pcap"
    cli.one_line_error(cli.nfpark("trace", "stats", missing), str(missing))


def test_stats_not_a_pcap(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pcap"
    junk.write_text("this is not a capture file\n" * 4)
    cli.one_line_error(cli.nfpark("trace", "stats", junk), str(junk))


def test_stats_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    cli.one_line_error(cli.nfpark("trace", "stats", empty), str(empty))


def test_stats_truncated_pcap(tmp_path: Path) -> None:
    good = cli.gen(tmp_path / "g.pcap", 50, size=200)
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(good.read_bytes()[:-100])
    cli.one_line_error(cli.nfpark("trace", "stats", cut), str(cut))


def test_reorder_names_the_missing_file(tmp_path: Path) -> None:
    good = cli.gen(tmp_path / "g.pcap", 50)
    missing = tmp_path / "gone.pcap"
    cli.one_line_error(cli.nfpark("trace", "reorder", good, missing), str(missing))


@pytest.mark.parametrize(("args", "names"), [
    (["--size", "huge"], ["--size", "huge"]),
    (["--size", "10"], ["--size"]),
    (["--size", "9001"], ["--size"]),
    (["--packets", "-5"], ["--packets"]),
    (["--flows", "-1"], ["--flows"]),
    (["--flows", "0"], ["--flows"]),
    (["--slf", "-2"], ["--slf"]),
    (["--ipv6", "-0.5"], ["--ipv6"]),
    (["--ipv6", "1.5"], ["--ipv6"]),
    (["--proto", "sctp"], ["--proto", "sctp"]),
    (["--packets", "ten"], ["--packets", "ten"]),
    (["--bogus", "1"], ["--bogus"]),
])
def test_gen_bad_options(tmp_path: Path, args: list[str], names: list[str]) -> None:
    out = tmp_path / "x.pcap"
    cli.one_line_error(cli.nfpark("trace", "gen", "--out", out, *args), *names)
    assert not out.exists() or out.stat().st_size == 0


def test_gen_unwritable_output(tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "dir" / "x.pcap"
    cli.one_line_error(cli.nfpark("trace", "gen", "--out", out), str(out))


def test_gen_without_out() -> None:
    cli.one_line_error(cli.nfpark("trace", "gen"), "--out")


def test_unknown_trace_verb() -> None:
    cli.one_line_error(cli.nfpark("trace", "frobnicate"), "frobnicate")
