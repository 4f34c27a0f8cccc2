#!/usr/bin/env bash
# Checks shipped shared libraries (the C tarball's libweighted, the wheel's modules) for what a
# user's machine must provide, and prints each one's glibc floor:
#
#   check-native-libs.sh [--allow NEEDED]... --exports REGEX LIB...
#
# Each LIB must
#  * need only glibc's own libraries (and the names given with --allow, such as libweighted.so.2
#    beside a Python module): libstdc++ and libgcc are linked in (cmake/StaticRuntime.cmake), so
#    neither may be needed again, by name or through a GLIBCXX_/CXXABI_/GCC_ symbol version;
#  * export nothing but symbols matching REGEX (the C API, a module's PyInit_): a leaked C++
#    runtime symbol would interpose on the process's own libstdc++.
# The last line is the newest GLIBC_ symbol version over all of them: the oldest glibc they
# load on. java/scripts/check-native-jar.sh does the same for the jar's JNI libraries.
set -euo pipefail
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
  needed=$(readelf -d -W "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for n in $needed; do
    case $n in
      libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-*.so.*) ;;
      libstdc++.so.* | libgcc_s.so.*) fail "$name needs $n: the C++ runtime must be linked in" ;;
      *)
        ok=
        for a in "${allow[@]}"; do [ "$n" = "$a" ] && ok=1; done
        [ -n "$ok" ] || fail "$name needs $n, which a user's machine may lack"
        ;;
    esac
  done
  versions=$(readelf -V -W "$lib")
  if cxx=$(grep -Eo '(GLIBCXX|CXXABI|GCC)_[0-9.]+' <<<"$versions" | sort -uV | tr '\n' ' ') \
    && [ -n "$cxx" ]; then
    fail "$name needs symbol versions of the shared C++ runtime: $cxx"
  fi
  # Defined, global, default-visibility dynamic symbols, less the version-definition names.
  extra=$(readelf --dyn-syms -W "$lib" \
    | awk '$5 ~ /GLOBAL|WEAK/ && $6 == "DEFAULT" && $7 != "UND" && $7 != "ABS" { sub(/@.*/, "", $8); print $8 }' \
    | grep -Ev "$exports" || true)
  [ -z "$extra" ] || fail "$name exports symbols beyond $exports: $(head -5 <<<"$extra" | tr '\n' ' ')"
  glibc=$(grep -Eo 'GLIBC_[0-9.]+' <<<"$versions" | sed 's/GLIBC_//' | sort -V | tail -n1)
  printf 'check-native-libs: %-40s NEEDED %s; glibc >= %s\n' "$name" "$(echo $needed)" "$glibc"
  floor=$(printf '%s\n%s\n' "$floor" "$glibc" | sed '/^$/d' | sort -V | tail -n1)
done
echo "check-native-libs: $# librar$([ $# -eq 1 ] && echo y || echo ies), glibc >= $floor"
