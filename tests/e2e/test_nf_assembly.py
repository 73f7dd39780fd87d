"""One NF-server assembly for every role (issue 15): the NF server's tag format follows the mode
(QUEUE-MEM's tags are always nfpark's, whatever `--tag-format` says for PayloadPark), and
`--role nf` honours `--reframe` as the one-process run does.

Before: the one-process run read QUEUE-MEM's 24 B tags as PayloadPark's 7 B ones under
`--tag-format payloadpark` (the NF endpoint saw no header packet), and `--role nf` ignored
`--reframe`.
"""

from __future__ import annotations

import json
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
    out = tmp_path / "out.pcap"
    two = cli.two_processes(trace, out, tmp_path / "nf.sock", "queuemem", "queuemem", CHAIN,
                            switch_extra=QM, nf_extra=("--reframe", "20", *QM))
    res = cli.result(two.switch)
    cli.assert_accounting(res)
    assert res["split"] > 0, res
    cli.assert_same_multiset(base_out, out)
    assert two.nf_rc == 0, f"nf role exit {two.nf_rc}\n{two.nf_err[-2000:]}"
    nf_res = json.loads(two.nf_out)
    assert nf_res["pools_full"] is True, nf_res
    assert nf_res["nf"]["server.header_only"] == res["split"], nf_res["nf"]
    assert "reframe" in nf_res, "--role nf ran without Reframer"
    assert nf_res["reframe"]["slf_in"] > 0, nf_res["reframe"]
    assert nf_res["nf"]["counter.packets"] == res["packets_in"], nf_res
