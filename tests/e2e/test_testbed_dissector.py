"""The Wireshark/tshark dissector (tools/wireshark/nfpark.lua) on captures of the NF link.

The switch runs as `--role switch` with its NF port a pcap vdev: everything it sends the NF
server is written to a capture (nothing comes back, so the run counts it all as unanswered).
tshark decodes that capture with the dissector, installed with `nfpark dissector install` into
a temporary HOME, and every decoded field is checked against what nfpark wrote: the input
frame each NF-link frame stands for (same order), the run's split count, and the tag's own
arithmetic (header frame + parked bytes - tag = original length).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark")

EMPTY_PCAP = bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000")


def capture_nf_link(lab: Lab, tmp: Path, mode: str, *extra: str) -> tuple[Path, Path, dict]:
    trace = lab.trace(400, flows=12, seed=5, proto="mix", size="dc")
    empty = tmp / "empty.pcap"
    empty.write_bytes(EMPTY_PCAP)
    nf = tmp / f"nf_{mode}.pcap"
    p = cli.nfpark("run", "--role", "switch", "--mode", mode, "--in", trace, "--out",
                   tmp / "out.pcap", "--nf-port", f"vdev:net_pcap0,tx_pcap={nf},rx_pcap={empty}",
                   "--json", "--no-progress", *extra)
    res = cli.result(p)
    cli.assert_accounting(res)
    assert res["packets_to_nf"] == res["packets_in"], res
    return Path(trace), nf, res


def tshark(home: Path, pcap: Path, fields: list[str], *opts: str) -> list[list[str]]:
    env = dict(os.environ, HOME=str(home))
    args = ["tshark", "-r", str(pcap), *opts, "-T", "fields"]
    for f in fields:
        args += ["-e", f]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    return [line.split("\t") for line in p.stdout.splitlines()]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HOME with the dissector installed the way a user installs it."""
    h = tmp_path_factory.mktemp("home")
    p = subprocess.run([str(cli.nfpark_bin()), "dissector", "install"], capture_output=True,
                       text=True, env=dict(os.environ, HOME=str(h)), timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    assert (h / ".local/lib/wireshark/plugins/nfpark.lua").is_file()
    return h


@pytest.mark.parametrize("mode", ["payloadpark", "queuemem"])
def test_nfpark_tag_and_queuemem_fields(lab: Lab, tmp_path: Path, home: Path, mode: str) -> None:
    trace, nf, res = capture_nf_link(lab, tmp_path, mode)
    opts = ("-o", "nfpark.mode:queuemem") if mode == "queuemem" else ()
    rows = tshark(home, nf, ["frame.len", "nfpark.tag.parked", "nfpark.tag.index",
                             "nfpark.tag.orig_len", "nfpark.tag.parked_len", "nfpark.qm.idx",
                             "nfpark.qm.orig_len"], *opts)
    inputs = [f.wire_len for f in cli.read_pcap(trace)]
    assert len(rows) == len(inputs)
    parked = 0
    for (flen, pk, idx, olen, plen, qidx, qlen), want in zip(rows, inputs, strict=True):
        if not pk:  # no tag: a packet sent whole without one
            assert int(flen) == want
            continue
        assert int(olen) == want, "the tag's original length is the input frame's"
        if pk == "1":  # QUEUE-MEM also tags a whole packet queued behind its flow: 0 B parked
            parked += int(plen) > 0
            assert int(flen) + int(plen) - 24 == want, (flen, plen, want)
        if mode == "queuemem":
            assert (qidx, qlen) == (idx, olen), "QUEUE-MEM fields read from the same bytes"
        else:
            assert qidx == "", "QUEUE-MEM fields only when asked for"
    assert parked == res["split"] > 0, (parked, res["split"])


def test_payloadpark_7_byte_header(lab: Lab, tmp_path: Path, home: Path) -> None:
    _, nf, res = capture_nf_link(lab, tmp_path, "payloadpark", "--tag-format", "payloadpark")
    rows = tshark(home, nf, ["frame.len", "payloadpark.enb", "payloadpark.index"],
                  "-o", "nfpark.mode:payloadpark7")
    enb = [r for r in rows if r[1] == "1"]
    assert len(enb) == res["split"] > 0
    assert len({r[2] for r in enb}) == len(enb), "every parked packet has its own slot"
    assert all(int(r[2]) < 65536 for r in enb)


def test_nfslicer_token(lab: Lab, tmp_path: Path, home: Path) -> None:
    trace, nf, res = capture_nf_link(lab, tmp_path, "nfslicer")
    rows = tshark(home, nf, ["ip.dsfield.dscp", "nfslicer.core", "nfslicer.index",
                             "nfslicer.escape"])
    inputs = [f.wire_len for f in cli.read_pcap(trace)]
    sliced = [(r, n) for r, n in zip(rows, inputs, strict=True) if r[1] and r[3] in ("0", "False")]
    assert len(sliced) == res["split"] > 0
    for r, n in sliced:
        assert r[0] == "63" and r[1] == "0", r  # DSCP 63, one core
        assert n > 500, "only frames longer than --slicer-thr are sliced"
        assert 0 <= int(r[2]) < 4096
    assert len({r[2] for r, _ in sliced}) == min(len(sliced), 4096)
