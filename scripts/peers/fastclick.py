"""Peer `fastclick`: FastClick (a `click` binary built with DPDK and its flow subsystem, named by
NFPARK_FASTCLICK) running bench/peers/fastclick/nfchain.click against nf_bench's FastClick
comparison chain: nfpark's `firewall,lb,counter` (1000 rules) and `lb,counter`, FastClick's
Classifier -> CheckIPHeader -> IPFilter -> FlowIPManager_DPDK -> FlowIPLoadBalancer -> FlowCounter.

Same rules: the IPFilter is the firewall's own 1000 default rules (peers_lib_bench
--write-rules), translated here; IPFilter is IPv4-only, so the IPv6 rules of the set are left
out on FastClick's side (they never match IPv4 traffic; nfpark's classifier keeps them). Same
traffic: nfpark's generator, 100k flows, SLF 1, 1500 B, TCP/UDP mix, replayed from memory on
both sides (FastClick: FromDump + ReplayUnqueue; nf_bench: its header-only trace).

Cost: CPU ns per packet on both sides. FastClick's start-up (EAL, mempools, loading the trace:
seconds of CPU) is removed by running LOOPS=a and LOOPS=b and differencing CPU time over the
packet-count difference; nf_bench times its loop with the thread's CPU clock. Alternated, N
repetitions. nf_bench --fastclick then prints both figures (NFPARK_FASTCLICK_MPPS).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from common import PeerError, Ratio, Report, Run, build_dir, gen_trace, run_for

CONFIG = Path(__file__).resolve().parents[2] / "bench/peers/fastclick/nfchain.click"
PROTO = {"6": "tcp", "17": "udp", "1": "icmp"}


def ipfilter_rule(line: str) -> str | None:
    """One rule of acl_rule.h's syntax as an IPFilter rule; None for an IPv6 rule."""
    w = line.split()
    f = dict(zip(w[1::2], w[2::2], strict=True))
    if ":" in f["src"] or ":" in f["dst"]:
        return None
    parts = []
    for key in ("src", "dst"):
        if f[key] != "any":
            parts.append(f"{key} net {f[key]}")
    if f["proto"] != "any":
        parts.append(PROTO.get(f["proto"], f"ip proto {f['proto']}"))
    for key, field in (("sport", "src port"), ("dport", "dst port")):
        v = f[key]
        if v == "any":
            continue
        lo, _, hi = v.partition("-")
        parts.append(f"{field} {lo}" if not hi else f"({field} >= {lo} && {field} <= {hi})")
    return ("deny " if w[0] == "deny" else "allow ") + (" && ".join(parts) or "all")


def acl_class(rules_file: Path) -> str:
    rules = [r for r in map(ipfilter_rule, rules_file.read_text().splitlines()) if r]
    body = ",\n    ".join([*rules, "allow all"])
    return (f"// the firewall's rules ({len(rules)} IPv4 of them) + the default action\n"
            "elementclass NFPARK_ACL { input -> f :: IPFilter(\n    " + body +
            "\n); f[0] -> [0]output; f[1] -> [1]output }\n")


def click_run(click: str, cfg: Path, trace: Path, loops: int, acl: int) -> tuple[Run, int]:
    cmd = [click, "--dpdk", "--no-huge", "-m", "2048", "--no-pci", "-l", "0", "--no-telemetry",
           f"--file-prefix=nfpeerfc{os.getpid()}", "--log-level=*:error", "--", str(cfg),
           f"TRACE={trace}", f"LOOPS={loops}", f"ACL={acl}"]
    r = run_for(cmd, None, timeout=900)
    m = re.search(r"RESULT count=(\d+) time_s=\S+ flows=(\d+) denied=(\d+)", r.stdout + r.stderr)
    if r.rc != 0 or not m:
        raise PeerError(f"click ACL={acl} LOOPS={loops}: rc {r.rc}: {r.stderr.strip()[-300:]}")
    if int(m.group(3)) != 0:
        raise PeerError(f"click ACL={acl}: {m.group(3)} packets denied (nfpark's rules deny none)")
    return r, int(m.group(1))


def click_cost(click: str, cfg: Path, trace: Path, acl: int, loops: tuple[int, int]) -> float:
    why = ""
    for _ in range(3):  # see common.cost_ns: start-up CPU varies on a loaded machine
        a, pa = click_run(click, cfg, trace, loops[0], acl)
        b, pb = click_run(click, cfg, trace, loops[1], acl)
        if pb > pa and b.cpu_s > a.cpu_s:
            return (b.cpu_s - a.cpu_s) * 1e9 / (pb - pa)
        why = f"{pa} -> {pb} packets, {a.cpu_s:.2f} -> {b.cpu_s:.2f} s CPU"
    raise PeerError(f"click ACL={acl}: no measurable difference in 3 tries ({why})")


def nfpark_cost(env_mpps: str | None) -> tuple[float, float, str]:
    """ns/packet of nfpark's firewall,lb,counter and lb,counter (nf_bench --fastclick)."""
    env = dict(os.environ)
    if env_mpps:
        env["NFPARK_FASTCLICK_MPPS"] = env_mpps
    r = run_for([str(build_dir() / "nf_bench"), "--fastclick"], None, env=env, timeout=300)
    got = dict(re.findall(r"^(firewall,lb,counter|lb,counter)\s+([0-9.]+) Mpps", r.stdout,
                          re.MULTILINE))
    if r.rc != 0 or len(got) != 2:
        raise PeerError(f"nf_bench --fastclick: rc {r.rc}: {r.stdout[-300:]}")
    return 1e3 / float(got["firewall,lb,counter"]), 1e3 / float(got["lb,counter"]), r.stdout


def run(report: Report, scratch: Path, quick: bool) -> None:
    click = os.environ.get("NFPARK_FASTCLICK", "")
    if not click:
        report.skip("fastclick", "NFPARK_FASTCLICK is not set (the path of a FastClick `click` "
                    "built with DPDK and --enable-flow)")
        return
    if not os.access(click, os.X_OK):
        report.skip("fastclick", f"NFPARK_FASTCLICK={click} is not an executable")
        return
    for need in ("nf_bench", "peers_lib_bench"):
        if not (build_dir() / need).exists():
            report.skip("fastclick", f"{build_dir() / need} not built")
            return
    rules = scratch / "rules1000.txt"
    r = run_for([str(build_dir() / "peers_lib_bench"), "--write-rules", "1000", str(rules)], None)
    if r.rc != 0:
        raise PeerError(f"peers_lib_bench --write-rules: {r.stderr.strip()}")
    cfg = scratch / "nfchain.click"
    cfg.write_text(acl_class(rules) + CONFIG.read_text())
    trace = gen_trace(scratch / "fc100k.pcap", 200_000, 100_000, 1, 1500, "mix")
    reps = 2 if quick else 3
    loops = (1, 4) if quick else (1, 8)
    with_acl, without = Ratio(), Ratio()
    for _ in range(reps):
        fc_acl = click_cost(click, cfg, trace, 1, loops)
        fc_no = click_cost(click, cfg, trace, 0, loops)
        mpps = f"{1e3 / fc_acl:.3f},{1e3 / fc_no:.3f}"
        nf_acl, nf_no, out = nfpark_cost(mpps)
        with_acl.add(nf_acl, fc_acl)
        without.add(nf_no, fc_no)
        for line in out.splitlines():
            if "FastClick" in line and "Mpps" in line:
                print("  " + line, flush=True)
    report.ratio("fastclick", "firewall,lb,counter 1000-rules 100k-flows", with_acl,
                 f"CPU ns/pkt: FastClick {min(with_acl.peer):.0f}, "
                 f"nfpark {min(with_acl.nfpark):.0f}")
    report.ratio("fastclick", "lb,counter 100k-flows", without,
                 f"CPU ns/pkt: FastClick {min(without.peer):.0f}, nfpark {min(without.nfpark):.0f}")
