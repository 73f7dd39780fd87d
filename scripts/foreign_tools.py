#!/usr/bin/env python3
"""Foreign captures through nfpark's tools: every capture of a directory (tcpdump's test suite,
say) through `nfpark trace stats|reorder|pad`, `nfpark sim` with the capture as its traffic (its
own timing and a set rate), the dp ≡ sim check where it applies (`nfpark run` against `nfpark
sim --out-pcap`, baseline) and the Python lab's pcap reading (nfpark.repro.pcapids).

Each (capture, tool) ends as one of:
  pass   the tool gave a result, and its numbers agree with tshark's (packets, wire and captured
         bytes after the link-layer conversion of docs/traces.md, duration) and with themselves
  error  the tool refused the capture with one line on stderr (exit 2) naming the file
  FAIL   anything else: a crash or signal, a hang (timeout), a sanitizer report, a Python
         traceback, an error of several lines, or a number that disagrees with the reference

    scripts/foreign_tools.py DIR [DIR...] [--nfpark BIN] [--tools stats,reorder,...] [--jobs N]
                             [--json OUT] [--only GLOB] [--timeout S]

The reference (tshark's per-frame lengths and times, capinfos' link type) is cached in
$TMPDIR/foreign_tools_ref.json. A progress line goes to stderr; the summary table (tools x
pass/error/FAIL) and every failure to stdout. Exit status 1 when something failed.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from nfpark.repro import pcapids

TOOLS = ("stats", "reorder", "pad", "sim-trace", "sim-rate", "equiv", "py")

# capinfos' encapsulation name -> bytes nfpark's reader adds to each record (docs/traces.md,
# "Link types": the link header is replaced by a 14-byte Ethernet header). Others are refused.
LINK_DELTA: dict[str, int] = {
    "ether": 0, "linux-sll": -2, "linux-sll2": -6, "null": 10, "loop": 10,
    "rawip": 14, "rawip4": 14, "rawip6": 14,
}
SIM_MAX_FRAME = 9216  # the simulator's records with full_bytes (sim/run_topology.cc)
EQUIV_MAX_MS = 120_000  # dp ≡ sim at the capture's own timing up to this duration
SIM_TRACE_MS = 1000  # virtual time of a sim run at the capture's own pace
SANITIZER = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "LeakSanitizer")


@dataclass
class Ref:
    """What tshark and capinfos say of a capture."""

    encap: str
    lens: list[tuple[int, int]]  # (wire, captured) per frame
    times: list[Decimal]
    complete: bool  # tshark read to the end without complaint

    @property
    def packets(self) -> int:
        return len(self.lens)


@dataclass
class Outcome:
    verdict: str  # pass | error | FAIL
    detail: str = ""


@dataclass
class CaptureResult:
    name: str
    encap: str
    packets: int
    outcomes: dict[str, Outcome] = field(default_factory=dict)


def reference(path: Path, cache: dict[str, Any]) -> Ref:
    key = f"{path.resolve()}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
    if key not in cache:
        ci = subprocess.run(["capinfos", "-M", "-T", "-r", "-E", str(path)], capture_output=True,
                            text=True, check=False)
        encap = ci.stdout.split("\t")[1].strip() if "\t" in ci.stdout else "unsupported"
        ts = subprocess.run(["tshark", "-n", "-r", str(path), "-T", "fields", "-e", "frame.len",
                             "-e", "frame.cap_len", "-e", "frame.time_epoch",
                             "--disable-protocol", "ALL", "--enable-protocol", "frame"],
                            capture_output=True, text=True, check=False)
        rows = [ln.split("\t") for ln in ts.stdout.splitlines() if ln.strip()]
        complaints = [ln for ln in ts.stderr.splitlines()
                      if ln.strip() and "dangerous" not in ln]  # tshark's root warning
        cache[key] = {"encap": encap, "rows": rows,
                      "complete": ts.returncode == 0 and not complaints}
    c = cache[key]
    return Ref(c["encap"], [(int(r[0]), int(r[1])) for r in c["rows"]],
               [Decimal(r[2]) for r in c["rows"]], c["complete"])


def run(cmd: list[str], timeout: float, cwd: Path | None = None) -> tuple[int | None, str, str]:
    """(exit status or None on timeout, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"),
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                           cwd=cwd, env=env, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout, p.stderr


def judge_refusal(rc: int | None, err: str, path: Path) -> Outcome | None:
    """A crash, hang, sanitizer report or unclear error; an Outcome("error") for a clear
    refusal; None when the tool succeeded (rc 0, no sanitizer output)."""
    if rc is None:
        return Outcome("FAIL", "timeout")
    if any(s in err for s in SANITIZER):
        first = next(ln for ln in err.splitlines() if any(s in ln for s in SANITIZER))
        return Outcome("FAIL", "sanitizer: " + first.strip()[:160])
    if rc < 0 or rc > 2:
        return Outcome("FAIL", f"exit {rc}: {err.strip()[-160:]}")
    if rc == 0:
        return None
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if len(lines) != 1:
        return Outcome("FAIL", f"error of {len(lines)} lines: {err.strip()[:200]}")
    if path.name not in lines[0]:
        return Outcome("FAIL", f"error does not name the file: {lines[0][:200]}")
    return Outcome("error", lines[0].replace(str(path), path.name).strip()[:220])


def expected_refusal(ref: Ref, msg: str) -> str:
    """'' when a refusal is what the reference predicts, else why it is suspicious."""
    if ref.encap not in LINK_DELTA:
        return ""  # a link type nfpark does not convert
    if not ref.complete:
        return ""  # tshark complained too (cut short, corrupt)
    for ok in ("shorter than its link header", "neither IPv4 nor IPv6", "keep only IP",
               "larger than", "empty file", "holds no packets",
               "timestamp fraction",  # the pcap format's limit (tshark reads it anyway)
               "timestamp out of range",  # beyond int64 nanoseconds (year 2262)
               "pcap version", "pcapng version",  # as libpcap (tshark reads pcap 2.5)
               "not a classic pcap file",  # the lab reads nfpark's own (classic) pcaps
               "is not Ethernet (1)",  # ... which are Ethernet
               "(refused by stats)", "(n/a: "):
        if ok in msg:
            return ""
    return "refused a capture tshark reads whole"


class Sweep:
    def __init__(self, a: argparse.Namespace, work: Path) -> None:
        self.bin = str(a.nfpark)
        self.timeout = a.timeout
        self.tools = a.tools
        self.work = work

    def nf(self, *args: str, timeout: float | None = None) -> tuple[int | None, str, str]:
        return run([self.bin, *args], timeout or self.timeout)

    # -- one capture ------------------------------------------------------------------------

    def capture(self, path: Path, ref: Ref) -> CaptureResult:
        res = CaptureResult(path.name, ref.encap, ref.packets)
        d = self.work / path.name.replace(".", "_")
        d.mkdir(parents=True, exist_ok=True)
        stats: dict[str, Any] | None = None
        for tool in self.tools:
            try:
                if tool == "stats":
                    o, stats = self.stats(path, ref)
                else:
                    o = getattr(self, tool.replace("-", "_"))(path, ref, stats, d)
            except Exception as e:  # noqa: BLE001 (the sweep records any failure and goes on)
                o = Outcome("FAIL", f"sweep: {type(e).__name__}: {e}")
            if o.verdict == "error" and (why := expected_refusal(ref, o.detail)):
                o = Outcome("FAIL", f"{why}: {o.detail}")
            res.outcomes[tool] = o
        shutil.rmtree(d, ignore_errors=True)
        return res

    def expect(self, ref: Ref) -> tuple[int, int, int] | None:
        """(packets, wire bytes, captured bytes) nfpark should count, or None if refused."""
        delta = LINK_DELTA.get(ref.encap)
        if delta is None:
            return None
        wire = sum(w for w, _ in ref.lens) + delta * ref.packets
        cap = sum(c for _, c in ref.lens) + delta * ref.packets
        return ref.packets, wire, cap

    def stats(self, path: Path, ref: Ref) -> tuple[Outcome, dict[str, Any] | None]:
        rc, out, err = self.nf("trace", "stats", str(path), "--json")
        if (o := judge_refusal(rc, err, path)) is not None:
            return o, None
        s: dict[str, Any] = json.loads(out)
        exp = self.expect(ref)
        if exp is None:
            return Outcome("FAIL", f"read link type {ref.encap}, which it should refuse"), s
        got = (s["packets"], s["bytes"], s["captured_bytes"])
        if not ref.complete and got[0] < exp[0]:
            return Outcome("FAIL", f"read {got} of a damaged capture tshark reads {exp} of"), s
        if got != exp and ref.complete:
            return Outcome("FAIL", f"packets/bytes/captured {got}, tshark {exp}"), s
        c = s["counts"]
        if c["ipv4"] + c["ipv6"] + c["unparsed"] != s["packets"] and "unparsed" in c:
            return Outcome("FAIL", f"ipv4 + ipv6 + unparsed != packets: {c}"), s
        if ref.times and ref.complete:
            first, last = ref.times[0], ref.times[-1]
            want = int((last - first) * 1_000_000_000)
            if abs(s["duration_ns"] - want) > 1:
                return Outcome("FAIL", f"duration_ns {s['duration_ns']}, tshark {want}"), s
        return Outcome("pass"), s

    def reorder(self, path: Path, ref: Ref, stats: dict[str, Any] | None, d: Path) -> Outcome:
        rc, out, err = self.nf("trace", "reorder", str(path), str(path), "--json")
        if (o := judge_refusal(rc, err, path)) is not None:
            return o
        r = json.loads(out)
        n = stats["packets"] if stats else r["sent"]
        want = {"sent": n, "received": n, "matched": n, "lost": 0, "duplicated": 0,
                "unmatched": 0, "reordered": 0}
        got = {k: r[k] for k in want}
        return Outcome("pass") if got == want else Outcome("FAIL", f"self-compare {got}")

    def pad(self, path: Path, ref: Ref, stats: dict[str, Any] | None, d: Path) -> Outcome:
        out_pcap = d / "pad.pcap"
        rc, out, err = self.nf("trace", "pad", str(path), str(out_pcap), "--json")
        if (o := judge_refusal(rc, err, path)) is not None:
            return o
        p = json.loads(out)
        if stats is None:
            return Outcome("FAIL", "pad read what stats refused")
        rc2, out2, err2 = self.nf("trace", "stats", str(out_pcap), "--json")
        if rc2 != 0:
            return Outcome("FAIL", f"stats of pad's output: {err2.strip()[:160]}")
        s2 = json.loads(out2)
        truncated = sum(1 for w, c in ref.lens if c < w)
        probs = []
        if p["packets"] != stats["packets"] or s2["packets"] != stats["packets"]:
            probs.append(f"packets {p['packets']}/{s2['packets']} of {stats['packets']}")
        if s2["bytes"] != stats["bytes"]:
            probs.append(f"wire bytes {s2['bytes']} of {stats['bytes']}")
        if p["padded"] != truncated and ref.complete:
            probs.append(f"padded {p['padded']}, tshark sees {truncated} truncated")
        big = sum(1 for w, _ in ref.lens if w + (LINK_DELTA.get(ref.encap) or 0) > 262144)
        if not big and s2["captured_bytes"] != s2["bytes"]:
            probs.append(f"output still truncated: {s2['captured_bytes']} of {s2['bytes']}")
        ci = subprocess.run(["capinfos", "-M", "-c", "-T", "-r", str(out_pcap)],
                            capture_output=True, text=True, check=False)
        if ci.returncode != 0 or ci.stdout.split("\t")[-1].strip() != str(stats["packets"]):
            probs.append(f"capinfos of the output: {ci.stdout.strip()} {ci.stderr.strip()}")
        return Outcome("FAIL", "; ".join(probs)) if probs else Outcome("pass")

    def scenario(self, path: Path, d: Path, timing: str, duration_ms: float,
                 extra: str = "", chain: str = "nat,counter") -> Path:
        sc = d / f"sim_{timing}.toml"
        sc.write_text(f'[sim]\nduration_ms = {duration_ms:.3f}\nfull_bytes = true\n{extra}'
                      f'[traffic]\nsource = "pcap"\npcap = "{path}"\ntiming = "{timing}"\n'
                      f'rate_gbps = 1\nloops = 1\n[switch]\nregister_mb = 256\n'
                      f'[nf_server]\nchain = "{chain}"\n')
        return sc

    def sim(self, path: Path, stats: dict[str, Any] | None, d: Path, timing: str,
            duration_ms: float, want: int) -> Outcome:
        sc = self.scenario(path, d, timing, duration_ms)
        rc, out, err = self.nf("sim", str(sc), "--json", "--no-progress")
        if (o := judge_refusal(rc, err, path)) is not None:
            if o.verdict == "error" and stats is not None and stats["packets"] > 0:
                return Outcome("FAIL", f"sim refused what stats read: {o.detail}")
            if o.verdict == "error" and stats is not None:  # no packets: nothing to replay
                return Outcome("error", f"{o.detail} (n/a: no packets)")
            return o
        r = json.loads(out)["runs"][0]
        if stats is None:
            return Outcome("FAIL", "sim ran a capture stats refused")
        probs = []
        if r["packets_in"] != want:
            probs.append(f"packets_in {r['packets_in']}, expected {want} of {stats['packets']}")
        if not (r["balanced"] and r["pools_full"]):
            probs.append(f"balanced {r['balanced']} pools_full {r['pools_full']}")
        return Outcome("FAIL", "; ".join(probs)) if probs else Outcome("pass")

    def sim_trace(self, path: Path, ref: Ref, stats: dict[str, Any] | None, d: Path) -> Outcome:
        """The capture's own pace (docs/sim.md §4): frame i starts at the later of the end of
        frame i-1 at line rate (100 Gbps) and frame i-1's start + the capture's gap (a gap
        that goes back in time counts as none). Within SIM_TRACE_MS of virtual time, the frames
        that start before the end are the ones offered."""
        if stats is None or ref.encap not in LINK_DELTA or not ref.complete:
            return self.sim(path, stats, d, "trace", SIM_TRACE_MS, stats["packets"] if stats else 0)
        stop = SIM_TRACE_MS * 10**9  # ps
        delta = LINK_DELTA[ref.encap]
        ns = [int(t * 10**9) for t in ref.times]
        s, want = 0, 0
        for i in range(ref.packets):
            if i:
                wire_prev = int((ref.lens[i - 1][0] + delta + 24) * 8000 / 100 + 0.5)
                gap = ns[i] - ns[i - 1]
                s = max(s + wire_prev, s + gap * 1000 if gap >= 0 else 0)
            if s >= stop:
                break
            want += 1
        return self.sim(path, stats, d, "trace", SIM_TRACE_MS, want)

    def sim_rate(self, path: Path, ref: Ref, stats: dict[str, Any] | None, d: Path) -> Outcome:
        wire = stats["bytes"] + 24 * stats["packets"] if stats else 0
        return self.sim(path, stats, d, "rate", wire * 8 / 1e9 * 1e3 * 1.01 + 10,
                        stats["packets"] if stats else 0)

    def equiv(self, path: Path, ref: Ref, stats: dict[str, Any] | None, d: Path) -> Outcome:
        """dp ≡ sim, baseline: `nfpark run` and `nfpark sim --out-pcap` give the same frames and
        counters. The NAT expires mappings on the NF's clock: the dataplane's is the capture's
        timestamps, so the simulator replays the capture at its own timing (virtual time =
        capture time) when that is short and goes forward; otherwise both run a chain that
        reads no clock (macswap). The simulator's records hold 9216 B at most (whole frames up
        to jumbo): a capture with longer frames is not comparable ("n/a")."""
        if stats is None:
            return Outcome("error", "(refused by stats)")
        if not stats["packets"]:
            return Outcome("error", "(n/a: no packets)")
        if any(w + (LINK_DELTA.get(ref.encap) or 0) > SIM_MAX_FRAME for w, _ in ref.lens):
            return Outcome("error", f"(n/a: frames above the simulator's {SIM_MAX_FRAME} B)")
        dur_ms = stats["duration_ns"] / 1e6
        forward = all(b >= a for a, b in zip(ref.times, ref.times[1:], strict=False))
        own_time = forward and 0 <= dur_ms <= EQUIV_MAX_MS
        chain = "nat,counter" if own_time else "macswap"
        run_out, sim_out = d / "run.pcap", d / "sim.pcap"
        rc, out, err = self.nf("run", "--mode", "baseline", "--chain", chain, "--in",
                               str(path), "--out", str(run_out), "--json", "--no-progress")
        if (o := judge_refusal(rc, err, path)) is not None:
            return o if o.verdict == "FAIL" else Outcome("FAIL", f"run refused: {o.detail}")
        run_res = json.loads(out)
        wire = stats["bytes"] + 24 * stats["packets"]
        if own_time:
            sc = self.scenario(path, d, "trace", dur_ms * 1.01 + 10, "reorder = false\n", chain)
        else:
            sc = self.scenario(path, d, "rate", wire * 8 / 1e9 * 1e3 * 1.01 + 10,
                               "reorder = false\n", chain)
        rc, out, err = self.nf("sim", str(sc), "--json", "--no-progress", "--out-pcap",
                               str(sim_out))
        if (o := judge_refusal(rc, err, path)) is not None:
            return o if o.verdict == "FAIL" else Outcome("FAIL", f"sim refused: {o.detail}")
        sim_res = json.loads(out)["runs"][0]
        probs = []
        for k in ("packets_in", "packets_out"):
            if run_res[k] != sim_res[k]:
                probs.append(f"{k} run {run_res[k]} sim {sim_res[k]}")
        chain_ctr = {k: v for k, v in run_res["nf"].items() if not k.startswith("server.")}
        sim_ctr = {k: sim_res["counters"].get("nf." + k) for k in chain_ctr}
        if sim_ctr != chain_ctr:
            diff = {k: (v, sim_ctr[k]) for k, v in chain_ctr.items() if sim_ctr[k] != v}
            probs.append(f"chain counters (run, sim) {diff}")
        a, b = list(pcapids.frames(run_out)), list(pcapids.frames(sim_out))
        if sorted(a) != sorted(b):
            probs.append(f"output frames differ ({len(a)} vs {len(b)})")
        else:
            fa: dict[bytes, list[bytes]] = {}
            fb: dict[bytes, list[bytes]] = {}
            for src, dst in ((a, fa), (b, fb)):
                for f in src:
                    dst.setdefault(pcapids.flow_key(f), []).append(f)
            if fa != fb:
                probs.append("per-flow order differs")
        return Outcome("FAIL", "; ".join(probs)) if probs else Outcome("pass")

    def py(self, path: Path, ref: Ref, stats: dict[str, Any] | None, d: Path) -> Outcome:
        """The lab's pcap reading in a child interpreter (a traceback is a failure)."""
        code = ("import sys; from pathlib import Path; from nfpark.repro import pcapids as P\n"
                "p = Path(sys.argv[1])\n"
                "try:\n"
                "    fs = list(P.frames(p))\n"
                "except ValueError as e:\n"
                "    print(e, file=sys.stderr); sys.exit(2)\n"
                "[P.flow_key(f) for f in fs]; [P.packet_id(f) for f in fs]\n"
                "pf, st = P.per_flow_reordering(p, p)\n"
                "print(len(fs), sum(len(f) for f in fs), st.reordered, pf.reordered)\n")
        rc, out, err = run([sys.executable, "-c", code, str(path)], self.timeout)
        if rc == 1 or "Traceback" in err:
            return Outcome("FAIL", "traceback: " + (err.strip().splitlines() or [""])[-1][:160])
        if (o := judge_refusal(rc, err, path)) is not None:
            return o
        n, nbytes, r1, r2 = (int(x) for x in out.split())
        if path.suffix == ".pcapng":
            return Outcome("FAIL", "read a pcapng file as classic pcap")
        want_n, want_bytes = ref.packets, sum(c for _, c in ref.lens)
        if ref.encap == "ether" and ref.complete and (n, nbytes) != (want_n, want_bytes):
            return Outcome("FAIL", f"frames {n} ({nbytes} B), tshark {want_n} ({want_bytes} B)")
        if r1 or r2:
            return Outcome("FAIL", f"self-compare reordered {r1}/{r2}")
        return Outcome("pass")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="directories of captures (or files)")
    ap.add_argument("--nfpark", type=Path, default=REPO / "build" / "nfpark")
    ap.add_argument("--tools", default=",".join(TOOLS),
                    type=lambda s: [t for t in s.split(",") if t],
                    help=f"comma-separated subset of {','.join(TOOLS)}")
    ap.add_argument("--only", default="*", help="glob on capture names")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120, help="seconds per command")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    a = ap.parse_args()
    if bad := [t for t in a.tools if t not in TOOLS]:
        ap.error(f"unknown tools {bad}")
    if "stats" not in a.tools:
        a.tools.insert(0, "stats")
    caps: list[Path] = []
    for d in a.dirs:
        files = [d] if d.is_file() else sorted(d.iterdir())
        caps += [f for f in files if f.suffix in (".pcap", ".pcapng", ".cap")
                 and fnmatch.fnmatch(f.name, a.only)]
    cache_path = Path(tempfile.gettempdir()) / "foreign_tools_ref.json"
    cache: dict[str, Any] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    refs: dict[Path, Ref] = {}
    t0 = time.monotonic()
    with cf.ThreadPoolExecutor(a.jobs * 3) as ex:  # tshark mostly waits: more at once
        for i, (f, ref) in enumerate(zip(caps, ex.map(lambda f: reference(f, cache), caps),
                                         strict=True)):
            refs[f] = ref
            print(f"\rreference {i + 1}/{len(caps)}", end="", file=sys.stderr, flush=True)
    cache_path.write_text(json.dumps(cache))
    results: list[CaptureResult] = []
    with tempfile.TemporaryDirectory(prefix="foreign_tools_") as tmp:
        sweep = Sweep(a, Path(tmp))
        with cf.ThreadPoolExecutor(a.jobs) as ex:
            futs = {ex.submit(sweep.capture, f, refs[f]): f for f in caps}
            for i, fut in enumerate(cf.as_completed(futs)):
                results.append(fut.result())
                fails = sum(1 for r in results for o in r.outcomes.values()
                            if o.verdict == "FAIL")
                print(f"\r{i + 1}/{len(caps)} captures, {fails} failures, "
                      f"{time.monotonic() - t0:.0f} s  ", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    results.sort(key=lambda r: r.name)
    print(f"{'tool':<10} {'pass':>6} {'error':>6} {'FAIL':>6}")
    for tool in a.tools:
        n = {v: sum(1 for r in results if r.outcomes.get(tool, Outcome("-")).verdict == v)
             for v in ("pass", "error", "FAIL")}
        print(f"{tool:<10} {n['pass']:>6} {n['error']:>6} {n['FAIL']:>6}")
    errors: dict[str, set[str]] = {}
    for r in results:
        for o in r.outcomes.values():
            if o.verdict == "error":
                key = re.sub(r"\d+", "N", o.detail.split(f"{r.name}: ", 1)[-1])[:70]
                errors.setdefault(key, set()).add(r.name)
    print("\nclear errors: captures per message (after the file name, numbers as N):")
    for k, v in sorted(errors.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(v):6}  {k}")
    print("\nfailures:")
    for r in results:
        for tool, o in r.outcomes.items():
            if o.verdict == "FAIL":
                print(f"  {r.name} [{r.encap}, {r.packets} pkts] {tool}: {o.detail}")
    if a.json:
        a.json.write_text(json.dumps([{"capture": r.name, "encap": r.encap, "packets": r.packets,
                                       **{t: [o.verdict, o.detail] for t, o in r.outcomes.items()}}
                                      for r in results], indent=1))
    return 1 if any(o.verdict == "FAIL" for r in results for o in r.outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
