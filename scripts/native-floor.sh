# The platform floor of every native library we ship, set here and nowhere else, and the check
# that holds each library to it. Sourced by scripts/check-native-libs.sh (libweighted.so.2, the
# wheel's modules, the export test of `make test`) and java/scripts/check-native-jar.sh (the
# jar's JNI libraries); mk/dist.mk derives the wheel's manylinux tag from WT_GLIBC_FLOOR.
#
# glibc 2.34 is the floor: RHEL 9 and its rebuilds, Amazon Linux 2023 (2.34), Ubuntu 22.04
# (2.35), Debian 12 (2.36). The engine's threads need 2.34 (pthread moved into libc); a build
# that needs more fails here rather than quietly dropping those distributions.
WT_GLIBC_FLOOR=2.34
# libgcc_s.so.1 stays a shared dependency (cmake/StaticRuntime.cmake says why). Its symbol
# versions are named after the GCC release that added them, and every release keeps the old
# ones, so a version no newer than the floor distributions' GCC (11 on RHEL 9 and Amazon
# Linux 2023) is present there: auditwheel's manylinux_2_34 policy allows up to GCC_7.0.0 on
# x86-64 and GCC_11.0 on aarch64. The build needs far less: the unwinder (GCC_3.0, GCC_3.3,
# GCC_4.2.0 for _Unwind_GetIPInfo) and a few arithmetic helpers (__udivti3 GCC_3.0, x86-64's
# __popcountdi2 GCC_3.4, aarch64's 128-bit long double __unordtf2 GCC_4.5.0). The maximum is
# held at that so that a new need is noticed; raising it as far as GCC_7.0.0 is safe for the
# floor above.
WT_GCC_MAX=4.5.0

# The libraries of glibc itself (and its dynamic loader) that a library may need.
wt_is_glibc_lib() {
  case $1 in
    libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-*.so.*) return 0 ;;
  esac
  return 1
}

# True if version $1 is no newer than $2 (both dotted, as in GLIBC_2.2.5).
wt_version_le() {
  [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n1)" = "$2" ]
}

# wt_check_runtime LIB [NEEDED...]: what LIB needs from the machine it loads on. LIB may need
# glibc's libraries, libgcc_s.so.1 and the names given (libweighted.so.2 beside a Python module),
# never libstdc++ (linked in); its GLIBC_ versions must be no newer than WT_GLIBC_FLOOR, its
# GCC_ versions no newer than WT_GCC_MAX, and nothing else may be asked of glibc or libgcc_s.
# On success prints "NEEDED ...; glibc >= V; libgcc_s GCC_...", on failure the reason, and
# returns 1. READELF overrides the readelf used.
wt_check_runtime() {
  local lib=$1 readelf=${READELF:-readelf} needed n a ok glibc="" gcc="" bad=""
  shift
  needed=$("$readelf" -d -W "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') || return 1
  for n in $needed; do
    ok=
    if wt_is_glibc_lib "$n" || [ "$n" = libgcc_s.so.1 ]; then ok=1; fi
    for a in "$@"; do [ "$n" = "$a" ] && ok=1; done
    case $n in libstdc++.so.*) echo "needs $n: libstdc++ must be linked in (WT_STATIC_CXX_RUNTIME)"; return 1 ;; esac
    [ -n "$ok" ] || { echo "needs $n, which a user's machine may lack"; return 1; }
  done
  # The version-needs section, as "FILE VERSION" lines: what the dynamic loader will demand.
  local pairs file version
  pairs=$("$readelf" -V -W "$lib" | awk '
    /^Version needs section/ { inneed = 1; next }
    /^Version (definition|symbols) section/ { inneed = 0 }
    inneed && /File:/ { for (i = 1; i <= NF; i++) if ($i == "File:") file = $(i + 1) }
    inneed && /Name:/ { for (i = 1; i <= NF; i++) if ($i == "Name:") print file, $(i + 1) }') || return 1
  while read -r file version; do
    [ -n "$file" ] || continue
    if wt_is_glibc_lib "$file"; then
      case $version in
        GLIBC_[0-9]*)
          if ! wt_version_le "${version#GLIBC_}" "$WT_GLIBC_FLOOR"; then
            bad="$bad $version ($(wt_symbols_of "$lib" "$version"))"
          fi
          glibc=$(printf '%s\n%s\n' "$glibc" "${version#GLIBC_}" | sed '/^$/d' | sort -V | tail -n1) ;;
        *) echo "needs $version of $file, a glibc feature no version number bounds"; return 1 ;;
      esac
    elif [ "$file" = libgcc_s.so.1 ]; then
      case $version in
        GCC_[0-9]*)
          wt_version_le "${version#GCC_}" "$WT_GCC_MAX" \
            || { echo "needs $version of libgcc_s.so.1 ($(wt_symbols_of "$lib" "$version")), newer than GCC_$WT_GCC_MAX (scripts/native-floor.sh)"; return 1; }
          gcc="$gcc $version" ;;
        *) echo "needs $version of libgcc_s.so.1"; return 1 ;;
      esac
    else
      case $version in
        GLIBCXX_* | CXXABI_*) echo "needs $version of $file: the shared C++ runtime"; return 1 ;;
      esac
    fi
  done <<<"$pairs"
  if [ -n "$bad" ]; then
    echo "needs$bad, newer than the glibc floor $WT_GLIBC_FLOOR (scripts/native-floor.sh)"
    return 1
  fi
  gcc=$(tr ' ' '\n' <<<"$gcc" | sed '/^$/d' | sort -uV | tr '\n' ' ' | sed 's/ $//')
  needed=$(echo $needed)
  echo "NEEDED ${needed:-none}; glibc >= ${glibc:-none}; libgcc_s ${gcc:-none}"
}

# The undefined dynamic symbols of LIB bound to VERSION, for a failure message.
wt_symbols_of() {
  "${READELF:-readelf}" --dyn-syms -W "$1" \
    | awk -v v="$2" '$7 == "UND" { n = split($8, p, "@"); if (n > 1 && p[n] == v) print p[1] }' \
    | sort -u | head -5 | tr '\n' ' ' | sed 's/ $//'
}
