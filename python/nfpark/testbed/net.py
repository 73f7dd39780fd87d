"""The testbed: network namespaces joined by veth pairs, nfpark's switch and NF servers in them.

    client ns          switch ns                                   server ns
    eth0 198.18.0.1 ── tcl ┐  nfpark run --role switch        ┌ tsv ── eth0 198.18.0.2
                            └─ af_packet ─ tnf1 ──┐          ─┘
                                                  │ veth (af_packet) or memif
                                          nf1 ns: eth0 ── nfpark run --role nf --chain CHAIN

The switch is a bump in the wire between client and server (one /24, no routing); every frame
the client and the server exchange crosses it, and what it sends to the NF server crosses the NF
link. Addresses are on 198.18.0.0/15 (RFC 2544 benchmarking range) and exist only inside the
testbed's namespaces: each testbed has its own, so two testbeds never see each other.

Names: every namespace is `nfptb-<ID>-<role>` (client, server, switch, nf1..nfM); veths are
created inside their namespaces (never in the host's), so only namespace names need the ID.
`down` removes everything: it ends the processes in the testbed's namespaces (found with
`ip netns pids`, not by name), deletes the namespaces (their veths go with them) and the state
directory — from the state file when there is one, and by prefix when `up` crashed before
writing it.

Offloads: GRO, GSO, TSO and checksum offload are turned off with ethtool on every veth, inside
the namespaces. With them on, the kernel hands af_packet 64 KB "frames" larger than the MTU and
TCP/UDP checksums left partial, which a real wire never carries.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

PREFIX = "nfptb-"
STATE_ROOT = Path(os.environ.get("NFPARK_TESTBED_DIR", "/run/nfpark-testbed"))
CLIENT_IP = "198.18.0.1"
SERVER_IP = "198.18.0.2"
NF_LINK_MTU = 2000  # room for a tag on a full 1514 B frame; af_packet carries up to 2016 B
MODES = ("baseline", "payloadpark", "queuemem", "nfslicer", "nicmem", "split")
MAX_NF_SERVERS = 16  # the switch's limit (park/server_choice.h)
BRIDGE = "bridge"  # no nfpark: a Linux bridge in the switch namespace (what the path costs)
OFFLOADS = ("tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off")
REPO = Path(__file__).resolve().parents[3]


class TestbedError(RuntimeError):
    """A testbed that cannot be made, found or removed: one line for the user."""


@dataclass
class Proc:
    """A process of the testbed: the switch or an NF server."""

    name: str  # switch, nf1, ...
    ns: str
    argv: list[str]
    pid: int = 0
    out: str = ""  # its stdout (the run's JSON result at exit)
    err: str = ""  # its stderr (rate summary, warnings)


@dataclass
class Testbed:
    """What `up` made: read back from the state file by `down` and `status`."""

    id: str
    mode: str = "baseline"
    chain: str = "firewall,counter"
    nf_servers: int = 1
    nf_link: str = "af_packet"  # or memif
    namespaces: list[str] = field(default_factory=list)
    procs: list[Proc] = field(default_factory=list)

    @property
    def dir(self) -> Path:
        return STATE_ROOT / self.id

    def ns(self, role: str) -> str:
        return f"{PREFIX}{self.id}-{role}"

    def proc(self, name: str) -> Proc:
        for p in self.procs:
            if p.name == name:
                return p
        raise TestbedError(f"testbed {self.id} has no process {name}")

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(self.dir / "state.json")

    @staticmethod
    def load(tb_id: str) -> Testbed | None:
        path = STATE_ROOT / tb_id / "state.json"
        if not path.is_file():
            return None
        d = json.loads(path.read_text())
        procs = [Proc(**p) for p in d.pop("procs")]
        return Testbed(**d, procs=procs)


def check_id(tb_id: str) -> str:
    if not tb_id or len(tb_id) > 12 or not all(c.isalnum() for c in tb_id):
        raise TestbedError(f"testbed id must be 1 to 12 letters or digits, got {tb_id!r}")
    return tb_id


def nfpark_bin() -> Path:
    env = os.environ.get("NFPARK_BIN")
    return Path(env) if env else REPO / "build" / "nfpark"


def missing_tools() -> list[str]:
    """What `up` needs and this machine lacks (root, ip, ethtool, the built binary)."""
    missing = [t for t in ("ip", "ethtool") if shutil.which(t) is None]
    if os.geteuid() != 0:
        missing.insert(0, "root")
    if not nfpark_bin().is_file():
        missing.append(f"{nfpark_bin()} (make build)")
    return missing


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=False)
    if check and p.returncode != 0:
        raise TestbedError(f"{' '.join(args)}: {p.stderr.strip() or p.returncode}")
    return p


def in_ns(ns: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return sh("ip", "netns", "exec", ns, *args, check=check)


def our_namespaces(tb_id: str | None = None) -> list[str]:
    """The namespaces of testbed `tb_id` (all testbeds' when None) that exist now."""
    prefix = PREFIX + (f"{tb_id}-" if tb_id else "")
    out = sh("ip", "netns", "list", check=False).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return sorted(n for n in names if n.startswith(prefix))


def ns_pids(ns: str) -> list[int]:
    out = sh("ip", "netns", "pids", ns, check=False).stdout
    return [int(x) for x in out.split() if x.isdigit()]


def alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def _veth(tb: Testbed, sw_if: str, peer_ns: str, mtu: int) -> None:
    sw = tb.ns("switch")
    sh("ip", "-n", sw, "link", "add", sw_if, "mtu", str(mtu), "type", "veth", "peer", "name",
       "eth0", "mtu", str(mtu), "netns", peer_ns)
    for ns, ifname in ((sw, sw_if), (peer_ns, "eth0")):
        sh("ip", "-n", ns, "link", "set", ifname, "up")
        in_ns(ns, "ethtool", "-K", ifname, *OFFLOADS, check=False)


def _network(tb: Testbed) -> None:
    for ns in tb.namespaces:
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        # No IPv6 chatter (router solicitations, DAD): only the traffic a test sends.
        in_ns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
        in_ns(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", check=False)
    _veth(tb, "tcl", tb.ns("client"), 1500)
    _veth(tb, "tsv", tb.ns("server"), 1500)
    sh("ip", "-n", tb.ns("client"), "addr", "add", f"{CLIENT_IP}/24", "dev", "eth0")
    sh("ip", "-n", tb.ns("server"), "addr", "add", f"{SERVER_IP}/24", "dev", "eth0")
    if tb.nf_link == "af_packet":
        for k in range(1, tb.nf_servers + 1):
            _veth(tb, f"tnf{k}", tb.ns(f"nf{k}"), NF_LINK_MTU)


def _nf_port(tb: Testbed, k: int, side: str) -> str:
    if tb.nf_link == "memif":
        role = "server" if side == "nf" else "client"
        return (f"vdev:net_memif{k - 1},role={role},socket={tb.dir / f'nf{k}.sock'},"
                "socket-abstract=no")  # a file: abstract sockets are per namespace
    iface = "eth0" if side == "nf" else f"tnf{k}"
    return f"vdev:net_af_packet{k + 1},iface={iface}"


def start(tb: Testbed, p: Proc) -> None:
    """Starts (or restarts) one process of the testbed in its namespace, in its own session."""
    out = (tb.dir / f"{p.name}.json").open("w")
    err = (tb.dir / f"{p.name}.log").open("w")
    with out, err:
        child = subprocess.Popen(["ip", "netns", "exec", p.ns, *p.argv], stdout=out, stderr=err,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
    p.pid = child.pid  # `ip netns exec` execs the command: same pid
    p.out, p.err = out.name, err.name
    tb.save()


def up(tb_id: str, mode: str = "baseline", chain: str = "firewall,counter", nf_servers: int = 1,
       nf_link: str = "af_packet", switch_args: tuple[str, ...] = (),
       nf_args: tuple[str, ...] = (), ready_s: float = 15.0) -> Testbed:
    """Makes the testbed and starts nfpark in it; returns when a ping crosses it."""
    check_id(tb_id)
    if missing := missing_tools():
        raise TestbedError("needs " + ", ".join(missing))
    if mode not in (*MODES, BRIDGE):
        raise TestbedError(f"mode must be one of {', '.join(MODES)} or {BRIDGE}, got {mode!r}")
    if nf_link not in ("af_packet", "memif"):
        raise TestbedError(f"--nf-link must be af_packet or memif, got {nf_link!r}")
    if not 1 <= nf_servers <= MAX_NF_SERVERS:
        raise TestbedError(f"--nf-servers must be 1 to {MAX_NF_SERVERS}, got {nf_servers}")
    if Testbed.load(tb_id) or our_namespaces(tb_id):
        raise TestbedError(f"testbed {tb_id} is up (or was not removed): "
                           f"`nfpark testbed down {tb_id}` first")
    tb = Testbed(tb_id, mode, chain, nf_servers, nf_link)
    tb.namespaces = [tb.ns(r) for r in ("client", "server", "switch")]
    tb.namespaces += [tb.ns(f"nf{k}") for k in range(1, nf_servers + 1)]
    tb.save()  # first: a crash from here on leaves what `down` needs
    try:
        _network(tb)
        if mode == BRIDGE:
            sw = tb.ns("switch")
            sh("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
            for i in ("tcl", "tsv", "br0"):
                if i != "br0":
                    sh("ip", "-n", sw, "link", "set", i, "master", "br0")
                sh("ip", "-n", sw, "link", "set", i, "up")
            wait_ready(tb, ready_s)
            return tb
        binary = str(nfpark_bin())
        common = ["run", "--mode", mode, "--timeout", "86400", "--json"]
        for k in range(1, nf_servers + 1):
            argv = [binary, *common, "--role", "nf", "--chain", chain, "--port",
                    _nf_port(tb, k, "nf"), *nf_args]
            tb.procs.append(Proc(f"nf{k}", tb.ns(f"nf{k}"), argv))
            start(tb, tb.procs[-1])
        if nf_link == "memif":
            socks = [tb.dir / f"nf{k}.sock" for k in range(1, nf_servers + 1)]
            _wait_for(lambda: all(s.exists() for s in socks), 10, "the NF servers' memif sockets")
            time.sleep(0.2)  # bound, and listening a moment later
        traffic = "vdev:net_af_packet0,iface=tcl+vdev:net_af_packet1,iface=tsv"
        # One NF port per server; both directions of a connection on one server (stateful NFs
        # such as the firewall see the whole connection).
        nf_ports = "+".join(_nf_port(tb, k, "switch") for k in range(1, nf_servers + 1))
        servers = ["--nf-servers", str(nf_servers), "--nf-spread", "symmetric"]
        argv = [binary, *common, "--role", "switch", "--traffic", traffic, "--nf-port", nf_ports,
                *(servers if nf_servers > 1 else []), *switch_args]
        tb.procs.append(Proc("switch", tb.ns("switch"), argv))
        start(tb, tb.procs[-1])
        wait_ready(tb, ready_s)
    except BaseException:
        down(tb_id)
        raise
    return tb


def _wait_for(cond: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(cond) and cond():
            return
        time.sleep(0.05)
    raise TestbedError(f"timed out after {seconds:g} s waiting for {what}")


def wait_ready(tb: Testbed, seconds: float) -> None:
    """Ready when the client's ping reaches the server through nfpark (so ARP is done too)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for p in tb.procs:
            if not alive(p.pid):
                log = Path(p.err).read_text()[-800:] if p.err else ""
                raise TestbedError(f"{p.name} exited during start-up: {log.strip()}")
        if shutil.which("ping") is None:
            time.sleep(2)
            return
        if in_ns(tb.ns("client"), "ping", "-c", "1", "-W", "1", SERVER_IP,
                 check=False).returncode == 0:
            return
    raise TestbedError(f"no ping crossed testbed {tb.id} within {seconds:g} s")


def stop(p: Proc, timeout_s: float = 10.0) -> dict[str, object] | None:
    """Ends one process with SIGTERM (SIGKILL after timeout_s); returns its JSON result."""
    if alive(p.pid):
        os.kill(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while alive(p.pid) and time.monotonic() < deadline:
            _reap(p.pid)
            time.sleep(0.05)
        if alive(p.pid):
            os.kill(p.pid, signal.SIGKILL)
    _reap(p.pid)
    return result(p)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def result(p: Proc) -> dict[str, object] | None:
    try:
        text = Path(p.out).read_text()
        return json.loads(text) if text.strip() else None
    except (OSError, json.JSONDecodeError):
        return None


def down(tb_id: str) -> dict[str, dict[str, object] | None]:
    """Removes testbed `tb_id`: its processes (switch first, so it counts what the NF sent
    back), namespaces and state. Returns each process's result. Works without a state file."""
    check_id(tb_id)
    tb = Testbed.load(tb_id)
    results: dict[str, dict[str, object] | None] = {}
    if tb:
        for p in sorted(tb.procs, key=lambda q: q.name != "switch"):
            results[p.name] = stop(p)
    namespaces = sorted(set(our_namespaces(tb_id)) | set(tb.namespaces if tb else []))
    for ns in namespaces:  # anything left running in them (a crash, a restarted process)
        for pid in ns_pids(ns):
            os.kill(pid, signal.SIGKILL)
    for ns in namespaces:
        sh("ip", "netns", "del", ns, check=False)
    if (STATE_ROOT / tb_id).is_dir():
        shutil.rmtree(STATE_ROOT / tb_id, ignore_errors=True)
    left = our_namespaces(tb_id)
    if left:
        raise TestbedError(f"could not remove {', '.join(left)}")
    return results


def status(tb_id: str) -> dict[str, object]:
    """What exists of testbed `tb_id` now: namespaces, processes and their last rate line."""
    tb = Testbed.load(tb_id)
    procs = {}
    for p in tb.procs if tb else []:
        lines = Path(p.err).read_text().splitlines() if Path(p.err).is_file() else []
        procs[p.name] = {"pid": p.pid, "alive": alive(p.pid), "ns": p.ns,
                         "last": lines[-1] if lines else ""}
    return {"id": tb_id, "state": str(tb.dir) if tb else None,
            "mode": tb.mode if tb else None, "chain": tb.chain if tb else None,
            "namespaces": our_namespaces(tb_id), "processes": procs,
            "client": CLIENT_IP, "server": SERVER_IP}


def testbeds() -> list[str]:
    """Ids of every testbed with a state file or a namespace on this machine."""
    ids = {n[len(PREFIX):].split("-")[0] for n in our_namespaces()}
    if STATE_ROOT.is_dir():
        ids |= {d.name for d in STATE_ROOT.iterdir() if (d / "state.json").is_file()}
    return sorted(ids)
