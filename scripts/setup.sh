#!/usr/bin/env bash
# Installs everything nfpark needs on Debian 12 (apt + a Python venv), then builds it.
# Idempotent and non-interactive: a second run with nothing to do takes a few seconds.
#   scripts/setup.sh            install + build (build/)
#   NFPARK_SKIP_BUILD=1 ...     install only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

apt_pkgs=(build-essential cmake ninja-build pkg-config git
          libdpdk-dev dpdk-dev libpcap-dev libgtest-dev libssl-dev libtomlplusplus-dev
          python3 python3-venv python3-pip
          tshark tcpreplay iperf3 iproute2 ethtool clang-format)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo_cmd debconf-set-selections
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: a venv in .venv with the lab package (editable) and its test tools.
py=${NFPARK_PYTHON_BOOTSTRAP:-/usr/bin/python3}
[ -x "$py" ] || py=python3
stamp=.venv/.nfpark-installed
want=$(sha256sum python/pyproject.toml | cut -c1-16)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating the Python environment in .venv"
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e "python[test]" >/dev/null
  echo "$want" > "$stamp"
fi

if [ -z "${NFPARK_SKIP_BUILD:-}" ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)"
fi
