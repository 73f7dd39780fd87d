"""Issue 14, config: one model for flags and TOML, every setting checked the same way.

Each case drives `./build/nfpark run` as a user would and expects exit 2 with one line that names
where the bad value came from; a flag and a file key that mean the same setting must fail with
the same message after that name. None of these runs start DPDK, so the file costs a few
seconds.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from . import nfpark_cli as cli
from .lab import Lab

REPO_DOC = cli.REPO / "docs" / "run.md"


def small_trace(lab: Lab) -> Path:
    return lab.trace(300, flows=20, size="dc", seed=5)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def body(line: str) -> str:
    """The rule in a message, between its location and the value it got: '--slots: expected
    X, got 0' and 'f.toml: [park] slots: expected X, got 0' both give X."""
    assert ": expected " in line and ", got " in line, line
    return line.split(": expected ", 1)[1].rsplit(", got ", 1)[0]


# (file section, key, TOML value, flag, flag value): the same bad value both ways.
SAME_RULE = [
    ("faults", "delay_us", "nan", "nf-delay-us", "nan"),
    ("faults", "delay_us", "-5", "nf-delay-us", "-5"),
    ("faults", "drop", "1.5", "nf-drop", "1.5"),
    ("faults", "dup", "-0.1", "nf-dup", "-0.1"),
    ("faults", "delay_us", "inf", "nf-delay-us", "inf"),
    ("run", "timeout_s", "-1", "timeout", "-1"),
    ("run", "timeout_s", "nan", "timeout", "nan"),
    ("run", "idle_exit_s", "-2", "idle-exit", "-2"),
    ("run", "reframe_us", "-1", "reframe", "-1"),
    ("park", "park_bytes", "0", "park-bytes", "0"),
    ("park", "max_exp", "0", "max-exp", "0"),
    ("park", "max_exp", "256", "max-exp", "256"),
    ("park", "slots", "0", "slots", "0"),
    ("park", "slots", "16777216", "slots", "16777216"),
    ("park", "min_payload", "9001", "min-payload", "9001"),
    ("queuemem", "header_array", "4000000000", "qm-header-array", "4000000000"),
    ("queuemem", "batch", "0", "qm-batch", "0"),
    ("nicmem", "pool", "0", "nicmem-pool", "0"),
    ("nfslicer", "ttl", "0", "slicer-ttl", "0"),
    ("run", "mem_mb", "-1", "mem-mb", "-1"),
]


@pytest.mark.parametrize(("section", "key", "toml_value", "flag", "flag_value"), SAME_RULE,
                         ids=[f"{s}.{k}={v}" for s, k, v, _, _ in SAME_RULE])
def test_flag_and_file_share_one_rule_and_one_message(lab: Lab, tmp_path: Path, section: str,
                                                      key: str, toml_value: str, flag: str,
                                                      flag_value: str) -> None:
    trace = small_trace(lab)
    cfg = write(tmp_path / "c.toml", f"[{section}]\n{key} = {toml_value}\n")
    from_file = cli.one_line_error(cli.nfpark("run", cfg, "--in", trace), str(cfg),
                                   f"[{section}] {key}")
    from_flag = cli.one_line_error(cli.nfpark("run", "--in", trace, f"--{flag}", flag_value),
                                   f"--{flag}")
    assert "expected" in from_flag, from_flag
    assert body(from_file) == body(from_flag), (from_file, from_flag)


def test_range_messages_agree_with_each_other(lab: Lab) -> None:
    """max_exp and slices are both 1..255: no "from 0 to 255" next to "from 1 to 255"."""
    trace = small_trace(lab)
    a = cli.one_line_error(cli.nfpark("run", "--in", trace, "--max-exp", "0"), "--max-exp")
    b = cli.one_line_error(cli.nfpark("run", "--in", trace, "--max-exp", "300"), "--max-exp")
    assert body(a) == body(b) and "from 1 to 255" in a, (a, b)


def test_nicmem_pool_zero_does_not_blame_mem_mb(lab: Lab, tmp_path: Path) -> None:
    cfg = write(tmp_path / "n.toml", "[nicmem]\npool = 0\n")
    line = cli.one_line_error(cli.nfpark("run", cfg, "--mode", "nicmem", "--in", small_trace(lab)),
                              "[nicmem] pool")
    assert "mem-mb" not in line, line


def test_a_directory_as_config_is_an_error(lab: Lab, tmp_path: Path) -> None:
    d = tmp_path / "confdir"
    d.mkdir()
    line = cli.one_line_error(cli.nfpark("run", d, "--in", small_trace(lab)), str(d))
    assert "directory" in line, line


@pytest.mark.parametrize(("text", "names"), [
    ("[nf.natt]\nexternal = [\"198.51.100.1\"]\n", ["[nf.natt]", "natt"]),
    ("[nf.nat]\nexternall = [\"198.51.100.1\"]\n", ["[nf.nat]", "externall"]),
    ("[nf.nat]\nport_min = 0\n", ["[nf.nat]", "port_min"]),
    ("[nf.lb]\ntable_size = 100\n", ["[nf.lb]", "table_size"]),
    ("[nf]\nnat = 3\n", ["[nf.nat]"]),
], ids=["unknown-nf", "typo-in-unused-nf", "bad-value-in-unused-nf", "not-prime", "not-a-table"])
def test_every_nf_section_is_checked_even_outside_the_chain(lab: Lab, tmp_path: Path, text: str,
                                                            names: list[str]) -> None:
    cfg = write(tmp_path / "nf.toml", text)
    # The chain is `forward`: none of these NFs runs, yet their sections must be valid.
    cli.one_line_error(cli.nfpark("run", cfg, "--in", small_trace(lab), "--chain", "forward"),
                       str(cfg), *names)


def test_unknown_keys_in_nested_sections(lab: Lab, tmp_path: Path) -> None:
    cfg = write(tmp_path / "ns.toml", "[park.no_split]\ndst_portz = [53]\n")
    cli.one_line_error(cli.nfpark("run", cfg, "--in", small_trace(lab)), str(cfg),
                       "[park.no_split]", "dst_portz")


def test_no_split_lists_from_flags_and_file(lab: Lab, tmp_path: Path) -> None:
    trace = small_trace(lab)
    cfg = write(tmp_path / "p.toml", "[park.no_split]\ndst_ports = [70000]\n")
    f = cli.one_line_error(cli.nfpark("run", cfg, "--in", trace), "dst_ports")
    g = cli.one_line_error(cli.nfpark("run", "--in", trace, "--no-split-ports", "53,70000"),
                           "--no-split-ports", "70000")
    assert body(f) == body(g), (f, g)


def test_memory_is_budgeted_before_anything_is_allocated(lab: Lab, tmp_path: Path) -> None:
    """Far more than this machine has: refused at once, naming the setting and the memory."""
    trace = small_trace(lab)
    p = cli.nfpark("run", "--mode", "payloadpark", "--slots", "4194304", "--park-slices", "8",
                   "--in", trace, "--out", tmp_path / "o.pcap", timeout=20)
    line = cli.one_line_error(p, "--slots", "not enough memory")
    assert re.search(r"needs \d+(\.\d)? GiB", line), line
    assert not (tmp_path / "o.pcap").exists()
    # Four flow tables of 2^28 flows, ~20.7 GiB each (one alone may fit a 24 GiB machine).
    cfg = write(tmp_path / "nfs.toml", "".join(f"[nf.{nf}]\nmax_flows = 268435456\n"
                                               for nf in ("nat", "counter", "lb", "ratelimit")))
    p = cli.nfpark("run", cfg, "--chain", "nat,counter,lb,ratelimit", "--in", trace, timeout=20)
    cli.one_line_error(p, "--chain", "not enough memory", "GiB")
    cfg = write(tmp_path / "qm.toml", "[queuemem]\nheader_array = 268435456\nbatch = 65535\n"
                "queues = 65535\nslices = 1\n")
    p = cli.nfpark("run", cfg, "--mode", "queuemem", "--in", trace, timeout=20)
    cli.one_line_error(p, str(cfg), "not enough memory", "GiB")


def test_mem_mb_below_what_the_pools_need_is_named(lab: Lab) -> None:
    p = cli.nfpark("run", "--mode", "payloadpark", "--slots", "1000000", "--mem-mb", "100",
                   "--in", small_trace(lab))
    cli.one_line_error(p, "--mem-mb", "--slots")


def test_help_lists_every_setting_and_the_exit_codes() -> None:
    md = cli.ok("run", "--settings-md")
    rows = [ln for ln in md.splitlines() if ln.startswith("| `[")]
    assert len(rows) >= 40, md
    help_text = cli.ok("run", "--help")
    for row in rows:
        key = row.split("`")[1]  # "[park] slots"
        assert key in help_text, f"--help does not name {key}"
        flag = re.search(r"`(--[a-z-]+)", row)
        assert flag is None or flag.group(1) in help_text, row
    for code in ("0 complete", "1 an invariant broke", "2 bad input", "3 interrupted"):
        assert code in " ".join(help_text.split()), code


def test_docs_list_every_setting_as_the_code_does() -> None:
    """docs/run.md's settings table is `nfpark run --settings-md`, byte for byte."""
    doc = REPO_DOC.read_text()
    md = cli.ok("run", "--settings-md")
    begin, end = "<!-- settings:begin -->\n", "<!-- settings:end -->"
    assert begin in doc and end in doc, "docs/run.md lacks the settings markers"
    table = doc.split(begin, 1)[1].split(end, 1)[0]
    assert table == md, ("docs/run.md's settings table is stale: regenerate it with "
                         "`./build/nfpark run --settings-md`")
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert code in doc, f"docs/run.md lacks exit code row {code}"


def test_config_errors_take_no_time(lab: Lab, tmp_path: Path) -> None:
    """A bad config is refused before DPDK starts (no EAL output, well under a second)."""
    cfg = write(tmp_path / "bad.toml", "[queuemem]\nheader_array = 4000000000\n")
    p = subprocess.run([str(cli.nfpark_bin()), "run", str(cfg), "--mode", "queuemem", "--in",
                        str(small_trace(lab))], capture_output=True, text=True, timeout=10,
                       check=False)
    assert p.returncode == 2 and "bad_alloc" not in p.stderr and "EAL" not in p.stderr, p.stderr
