#!/usr/bin/env bash
# Checks the native libraries inside a weighted-jni jar, one per os/arch:
#
#   check-native-jar.sh JAR JNI_HEADER_DIR PLATFORM...     e.g. linux-x86_64 linux-aarch64
#
# For each platform the jar must hold native/<platform>/libweightedjni.so, and that file must be
#  * a 64-bit ELF shared object for the platform's machine (a library copied under the wrong
#    directory would fail to load there, and only there);
#  * exporting exactly the natives javac -h declared (JNI_HEADER_DIR, from this build's Java
#    sources) plus JNI_OnLoad/JNI_OnUnload: no missing native (an UnsatisfiedLinkError at the
#    first call) and no wt_* (the embedded engine stays private, bindings/jni/weightedjni.map);
#  * self-contained: NEEDED names only glibc's libraries, never libweighted or libfmt, and there
#    is no RPATH/RUNPATH (the jar extracts one file to a temp directory; nothing beside it could
#    be found). libstdc++ and libgcc are linked in (cmake/StaticRuntime.cmake): neither may come
#    back, by name or by a GLIBCXX_/CXXABI_/GCC_ symbol version, or the host's C++ runtime would
#    again have to be as new as the build machine's. The platforms must agree on all of this.
# It prints the newest glibc symbol version each library needs: the oldest distribution it
# loads on.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 JAR JNI_HEADER_DIR PLATFORM..." >&2; exit 2; }
jar=$1 headers=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-native-jar: $*" >&2; exit 1; }

[ -f "$jar" ] || fail "no jar at $jar"
# The natives Java declares, from the generated headers (one JNIEXPORT line per native).
grep -ho 'JNICALL Java_io_weighted_[A-Za-z0-9_]*' "$headers"/*.h | sed 's/^JNICALL //' \
  | sort -u >"$tmp/declared"
[ -s "$tmp/declared" ] || fail "no Java_io_weighted_* natives in $headers/*.h"
printf '%s\n' JNI_OnLoad JNI_OnUnload | sort -u - "$tmp/declared" >"$tmp/expected"

first=
for platform in "$@"; do
  entry=native/$platform/libweightedjni.so
  lib=$tmp/$platform/libweightedjni.so
  mkdir -p "$tmp/$platform"
  unzip -p "$jar" "$entry" >"$lib" 2>/dev/null && [ -s "$lib" ] || fail "$jar has no $entry"

  case $platform in
    linux-x86_64) machine='Advanced Micro Devices X86-64' loader=ld-linux-x86-64.so.2 ;;
    linux-aarch64) machine=AArch64 loader=ld-linux-aarch64.so.1 ;;
    *) fail "$platform: no expected ELF machine known to this script" ;;
  esac
  readelf -h "$lib" >"$tmp/$platform.h"
  grep -q 'Class: *ELF64' "$tmp/$platform.h" || fail "$entry is not ELF64"
  grep -q 'Type: *DYN' "$tmp/$platform.h" || fail "$entry is not a shared object"
  grep -q "Machine: *$machine\$" "$tmp/$platform.h" \
    || fail "$entry is for $(sed -n 's/^ *Machine: *//p' "$tmp/$platform.h"), not $machine"

  # Defined, global, default-visibility dynamic symbols: what System.load can bind to.
  readelf --dyn-syms -W "$lib" \
    | awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" { sub(/@.*/, "", $8); print $8 }' \
    | sort -u >"$tmp/$platform.exported"
  if ! diff -u "$tmp/expected" "$tmp/$platform.exported" >"$tmp/$platform.diff"; then
    cat "$tmp/$platform.diff" >&2
    fail "$entry: exported symbols differ from the declared natives (- missing, + extra)"
  fi

  readelf -d "$lib" >"$tmp/$platform.d"
  if grep -Eq '\((RPATH|RUNPATH)\)' "$tmp/$platform.d"; then
    fail "$entry has an RPATH/RUNPATH: $(grep -E 'RPATH|RUNPATH' "$tmp/$platform.d")"
  fi
  sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' "$tmp/$platform.d" | sort >"$tmp/$platform.needed"
  while read -r needed; do
    case $needed in
      libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | "$loader") ;;
      libstdc++.so.* | libgcc_s.so.*)
        fail "$entry needs $needed: the C++ runtime must be linked in (WT_STATIC_CXX_RUNTIME)" ;;
      *) fail "$entry needs $needed, which the jar does not carry and a JVM host may lack" ;;
    esac
  done <"$tmp/$platform.needed"
  readelf -V -W "$lib" >"$tmp/$platform.V"
  if cxx=$(grep -Eo '(GLIBCXX|CXXABI|GCC)_[0-9.]+' "$tmp/$platform.V" | sort -uV | tr '\n' ' ') \
    && [ -n "$cxx" ]; then
    fail "$entry needs symbol versions of the shared C++ runtime: $cxx"
  fi
  # The same runtime on every platform once the dynamic loader's own name is set aside.
  grep -vx "$loader" "$tmp/$platform.needed" >"$tmp/$platform.needed-common" || true

  if [ -z "$first" ]; then
    first=$platform
  elif ! cmp -s "$tmp/$first.needed-common" "$tmp/$platform.needed-common"; then
    fail "$platform needs $(tr '\n' ' ' <"$tmp/$platform.needed-common")but $first needs" \
      "$(tr '\n' ' ' <"$tmp/$first.needed-common")"
  fi

  glibc=$(grep -o 'Name: GLIBC_[0-9.]*' "$tmp/$platform.V" | sed 's/Name: GLIBC_//' | sort -V | tail -n1)
  printf 'check-native-jar: %-14s %s, %d natives + JNI_OnLoad/OnUnload, NEEDED %s, glibc >= %s\n' \
    "$platform" "$machine" "$(wc -l <"$tmp/declared")" "$(tr '\n' ' ' <"$tmp/$platform.needed" | sed 's/ $//')" \
    "$glibc"
done
echo "check-native-jar: $jar holds $# platform(s): $*"
