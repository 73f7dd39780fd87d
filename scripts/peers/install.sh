#!/usr/bin/env bash
# Installs the peers' Debian packages (scripts/bench.sh --peers calls this; the test command
# never does). Idempotent: only what is missing is installed. Without root or apt it only says
# what is missing; the peers that need it are then reported as skipped with the reason.
set -uo pipefail
pkgs=(dpdk openvswitch-switch-dpdk nftables iproute2 ethtool)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "peers: not installed (needs root and apt-get): ${missing[*]}" >&2
  exit 1
fi
echo "peers: installing ${missing[*]}" >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 ||
  { echo "peers: apt-get install ${missing[*]} failed" >&2; exit 1; }
