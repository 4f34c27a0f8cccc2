#!/usr/bin/env bash
# Checks shipped shared libraries (the C tarball's libweighted, the wheel's modules, and in
# `make test` the build's libweighted and JNI library) for what a user's machine must provide,
# and prints each one's glibc floor:
#
#   check-native-libs.sh [--allow NEEDED]... --exports REGEX LIB...
#
# Each LIB must
#  * need only glibc's libraries, libgcc_s.so.1 and the names given with --allow (such as
#    libweighted.so.2 beside a Python module), never libstdc++ (linked in,
#    cmake/StaticRuntime.cmake), by name or by a GLIBCXX_/CXXABI_ symbol version;
#  * need no GLIBC_ version newer than the floor and no GCC_ version newer than the maximum,
#    both set in scripts/native-floor.sh alone;
#  * export nothing but symbols matching REGEX (the C API, a module's PyInit_): a leaked C++
#    runtime symbol would interpose on the process's own libstdc++.
# The last line is the newest GLIBC_ symbol version over all of them: the oldest glibc they
# load on. java/scripts/check-native-jar.sh does the same for the jar's JNI libraries.
# READELF overrides the readelf used.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/native-floor.sh"
fail() { echo "check-native-libs: $*" >&2; exit 1; }
allow=() exports=
while [ $# -gt 0 ]; do
  case $1 in
    --allow) allow+=("$2"); shift 2 ;;
    --exports) exports=$2; shift 2 ;;
    *) break ;;
  esac
done
[ -n "$exports" ] && [ $# -gt 0 ] || { echo "usage: $0 [--allow NEEDED]... --exports REGEX LIB..." >&2; exit 2; }

floor=
for lib in "$@"; do
  [ -f "$lib" ] || fail "no file $lib"
  name=$(basename "$lib")
  needs=$(wt_check_runtime "$lib" "${allow[@]}") || fail "$name $needs"
  # Defined, global, default-visibility dynamic symbols, less the version-definition names.
  extra=$("${READELF:-readelf}" --dyn-syms -W "$lib" \
    | awk '$5 ~ /GLOBAL|WEAK/ && $6 == "DEFAULT" && $7 != "UND" && $7 != "ABS" { sub(/@.*/, "", $8); print $8 }' \
    | grep -Ev "$exports" || true)
  [ -z "$extra" ] || fail "$name exports symbols beyond $exports: $(head -5 <<<"$extra" | tr '\n' ' ')"
  printf 'check-native-libs: %-40s %s\n' "$name" "$needs"
  glibc=$(sed -n 's/.*glibc >= \([0-9.]*\);.*/\1/p' <<<"$needs")
  floor=$(printf '%s\n%s\n' "$floor" "$glibc" | sed '/^$/d' | sort -V | tail -n1)
done
echo "check-native-libs: $# librar$([ $# -eq 1 ] && echo y || echo ies), glibc >= $floor" \
  "(floor $WT_GLIBC_FLOOR, libgcc_s up to GCC_$WT_GCC_MAX)"
