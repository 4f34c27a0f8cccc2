#!/usr/bin/env bash
# Installs what the build and the tests need, and nothing twice: each step checks first.
# Debian packages by name (pinned by the Debian release), Python packages pinned in
# requirements-dev.txt. Safe to run again; fast when everything is present. Targets that need
# more name it in WT_EXTRA_DEBS: mk/reliability.mk (clang for the fuzzers), mk/aarch64.mk (the
# aarch64 cross compiler, qemu-user, googletest's sources).
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(cmake ninja-build g++ pkg-config libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev
      libbenchmark-dev libcurl4-openssl-dev)
if [ -n "${WT_EXTRA_DEBS:-}" ]; then read -r -a extra <<<"$WT_EXTRA_DEBS"; debs+=("${extra[@]}"); fi
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ -f requirements-dev.txt ]; then
  stamp=build/.pip-stamp
  if [ ! -f "$stamp" ] || [ requirements-dev.txt -nt "$stamp" ]; then
    echo "setup: installing Python packages from requirements-dev.txt"
    python3 -m pip install -q --disable-pip-version-check -r requirements-dev.txt
    mkdir -p build && touch "$stamp"
  fi
fi
