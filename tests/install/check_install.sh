#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds a consumer with find_package(weighted)
# and another with pkg-config, and runs both against the installed library.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
lib=$(find "$tmp/prefix" -name 'libweighted.so.2' | head -n1)
[ -n "$lib" ] || { echo "libweighted.so.2 (SONAME) not installed"; exit 1; }
libdir=$(dirname "$lib")

cmake -S "$src_dir/consumer" -B "$tmp/cmake-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake-consumer" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cmake-consumer/consumer"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c99 -o "$tmp/pc-consumer" "$src_dir/consumer/main.c" $(pkg-config --cflags --libs weighted)
LD_LIBRARY_PATH="$libdir" "$tmp/pc-consumer"
echo "install check: find_package and pkg-config both work"
