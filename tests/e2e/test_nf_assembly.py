"""One NF-server assembly for every role (issue 15): the NF server's tag format follows the mode
(QUEUE-MEM's tags are always nfpark's, whatever `--tag-format` says for PayloadPark), and
`--role nf` honours `--reframe` as the one-process run does.

Before: the one-process run read QUEUE-MEM's 24 B tags as PayloadPark's 7 B ones under
`--tag-format payloadpark` (the NF endpoint saw no header packet), and `--role nf` ignored
`--reframe`.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from . import nfpark_cli as cli
from .lab import Lab

CHAIN = "nat,counter"
QM = ("--tag-format", "payloadpark")  # PayloadPark's format: QUEUE-MEM must ignore it


def test_queuemem_tags_read_as_nfpark_in_one_process(lab: Lab, tmp_path: Path) -> None:
    trace = lab.trace(2000, flows=50, seed=4, proto="mix", size="dc")
    base_out, _ = lab.baseline(trace, CHAIN)
    out = tmp_path / "out.pcap"
    res = cli.run(trace, out, "queuemem", CHAIN, *QM)
    cli.assert_accounting(res)
    assert res["split"] > 0, res
    assert res["nf"]["server.header_only"] == res["split"], res["nf"]
    cli.assert_same_multiset(base_out, out)


def test_nf_role_honours_reframe_and_queuemem_tag_format(lab: Lab, tmp_path: Path) -> None:
    trace = lab.trace(2000, flows=50, seed=4, proto="mix", size="dc")
    base_out, _ = lab.baseline(trace, CHAIN)
    sock = tmp_path / "nf.sock"
    nf = subprocess.Popen(
        [str(cli.nfpark_bin()), "run", "--role", "nf", "--mode", "queuemem", "--chain", CHAIN,
         "--port", f"vdev:net_memif0,role=server,socket={sock}", "--idle-exit", "2", "--json",
         "--timeout", "60", "--reframe", "20", *QM],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):  # the server creates its socket once EAL is up
            if sock.exists():
                break
            time.sleep(0.05)
        out = tmp_path / "out.pcap"
        sw = cli.nfpark("run", "--role", "switch", "--mode", "queuemem", "--in", trace, "--out",
                        out, "--nf-port", f"vdev:net_memif0,role=client,socket={sock}", "--json",
                        "--no-progress", "--timeout", "60", *QM)
        nf_out, nf_err = nf.communicate(timeout=60)
    finally:
        if nf.poll() is None:
            nf.kill()
            nf.wait()
    res = cli.result(sw)
    cli.assert_accounting(res)
    assert res["split"] > 0, res
    cli.assert_same_multiset(base_out, out)
    assert nf.returncode == 0, f"nf role exit {nf.returncode}\n{nf_err[-2000:]}"
    nf_res = json.loads(nf_out)
    assert nf_res["pools_full"] is True, nf_res
    assert nf_res["nf"]["server.header_only"] == res["split"], nf_res["nf"]
    assert "reframe" in nf_res, "--role nf ran without Reframer"
    assert nf_res["reframe"]["slf_in"] > 0, nf_res["reframe"]
    assert nf_res["nf"]["counter.packets"] == res["packets_in"], nf_res
