#!/usr/bin/env bash
# Installs everything nfpark needs on Debian 12 (apt + a Python venv), then builds it.
# Idempotent and non-interactive: a second run with nothing to do takes a few seconds.
#   scripts/setup.sh            install + build (build/)
#   NFPARK_SKIP_BUILD=1 ...     install only
#   NFPARK_BUILD_TARGET=T ...   build only target T (make test: nfpark_test_build, no benches)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

apt_pkgs=(build-essential cmake ninja-build pkg-config git
          libdpdk-dev dpdk-dev libpcap-dev libgtest-dev libssl-dev libtomlplusplus-dev
          python3 python3-venv python3-pip
          tshark tcpreplay iperf3 iproute2 ethtool nftables iputils-ping curl clang-format ccache
          clang libclang-rt-14-dev  # clang and its libFuzzer/sanitizer runtimes: scripts/fuzz.sh
          memcached)  # memcached: the reference server of tests/e2e/test_kvs_conformance.py
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

# Python: a venv with the lab's dependencies (not the lab itself: every checkout runs its own
# python/ through PYTHONPATH). The venv lives in a cache keyed by python/pyproject.toml, so a new
# clone on a machine that has one links to it in a second; .venv is that link.
py=${NFPARK_PYTHON_BOOTSTRAP:-/usr/bin/python3}
[ -x "$py" ] || py=python3
want=$(sha256sum python/pyproject.toml | cut -c1-16)
cache=${NFPARK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nfpark}
venv="$cache/venv-$want"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
  echo "setup: creating the Python environment in $venv (first time only)"
  rm -rf "$venv"
  mkdir -p "$cache"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
  deps=$("$venv/bin/python" - <<'PY'
import tomllib
with open("python/pyproject.toml", "rb") as f:
    p = tomllib.load(f)["project"]
print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))
PY
)
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q $deps >/dev/null
  touch "$venv/.complete"
fi
if [ "$(readlink .venv 2>/dev/null)" != "$venv" ]; then
  rm -rf .venv
  ln -s "$venv" .venv
fi

# ccache (when present) makes rebuilds of an unchanged tree nearly free.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

if [ -z "${NFPARK_SKIP_BUILD:-}" ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
  cmake --build build -j"$(nproc)" ${NFPARK_BUILD_TARGET:+--target "$NFPARK_BUILD_TARGET"}
fi
