"""The peer bench's translations of the firewall's rules (scripts/peers): each peer must get the
same rules as nfpark, so the translations are checked here (pure Python, < 1 s; the peers
themselves run only in `scripts/bench.sh --peers`, never in the test command)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from . import nfpark_cli as cli

sys.path.insert(0, str(cli.REPO / "scripts" / "peers"))
import common
import fastclick
import kernel
import ovs


def covered(pairs: list[str]) -> set[int]:
    out: set[int] = set()
    for p in pairs:
        v, m = (int(x, 16) for x in p.split("/"))
        out |= {x for x in range(65536) if x & m == v}
    return out


@pytest.mark.parametrize("lo,hi", [(0, 65535), (0, 1023), (80, 80), (2915, 43761), (1, 65534),
                                   (65535, 65535), (1024, 1031)])
def test_port_range_flows_cover_exactly_the_range(lo: int, hi: int) -> None:
    pairs = ovs.port_range(lo, hi)
    assert covered(pairs) == set(range(lo, hi + 1))
    assert len(pairs) <= 30  # a prefix cover: at most 2 x 15 masks


LINES = [
    "deny src 251.50.85.64/27 dst 144.21.0.0/18 sport 373 dport any proto 6",
    "deny src 251.170.93.192/28 dst any sport 0-1023 dport 2915-43761 proto 17",
    "deny src 100::8000:0:0:0/65 dst any sport 132 dport any proto 6",
    "deny src 241.24.0.0/13 dst any sport 662 dport any proto any",
    "allow src any dst 10.0.0.0/8 sport any dport any proto 1",
]


def test_nft_rules_keep_every_field() -> None:
    got = [kernel.nft_rule(x) for x in LINES]
    assert got[0] == ("ip saddr 251.50.85.64/27 ip daddr 144.21.0.0/18 meta l4proto 6 "
                      "th sport 373 drop")
    assert got[1] == "ip saddr 251.170.93.192/28 meta l4proto 17 th sport 0-1023 " \
                     "th dport 2915-43761 drop"
    assert got[2] == "ip6 saddr 100::8000:0:0:0/65 meta l4proto 6 th sport 132 drop"
    assert got[3] == "ip saddr 241.24.0.0/13 th sport 662 drop"
    assert got[4] == "ip daddr 10.0.0.0/8 meta l4proto 1 accept"


def test_ipfilter_rules_leave_out_ipv6_and_spell_ranges() -> None:
    got = [fastclick.ipfilter_rule(x) for x in LINES]
    assert got[0] == "deny src net 251.50.85.64/27 && dst net 144.21.0.0/18 && tcp && src port 373"
    assert got[1] == ("deny src net 251.170.93.192/28 && udp && (src port >= 0 && src port <= 1023)"
                      " && (dst port >= 2915 && dst port <= 43761)")
    assert got[2] is None
    assert got[4] == "allow dst net 10.0.0.0/8 && icmp"


def test_openflow_rules_in_priority_order_with_every_port_split(tmp_path: Path) -> None:
    f = tmp_path / "rules.txt"
    f.write_text("\n".join(LINES) + "\n")
    flows = ovs.of_flows(f)
    first = [x for x in flows if "priority=60000," in x]
    assert first == ["ip,priority=60000,in_port=1,nw_src=251.50.85.64/27,nw_dst=144.21.0.0/18,"
                     "nw_proto=6,tp_src=0x0175/0xffff,actions=drop"]
    second = [x for x in flows if "priority=59999," in x]
    assert len(second) == len(ovs.port_range(0, 1023)) * len(ovs.port_range(2915, 43761))
    assert all("nw_proto=17" in x for x in second)
    v6 = [x for x in flows if "priority=59998," in x]
    assert v6 and all(x.startswith("ipv6,") and "ipv6_src=100::8000:0:0:0/65" in x for x in v6)
    any_proto = [x for x in flows if "priority=59997," in x]  # ports, proto any: tcp and udp
    assert sorted(x.split("nw_proto=")[1][:2] for x in any_proto) == ["17", "6,"]
    assert next(x for x in flows if "priority=59996," in x).endswith("nw_proto=1,actions=output:2")


def test_ratio_is_peer_over_nfpark_with_range() -> None:
    r = common.Ratio()
    r.add(10.0, 30.0)
    r.add(12.0, 24.0)
    assert r.text() == "2.40x [2.00-3.00, N=2]"
    assert common.Ratio().text() == "n/a"
