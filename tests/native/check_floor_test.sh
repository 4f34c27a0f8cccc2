#!/usr/bin/env bash
# The platform-floor checks (scripts/check-native-libs.sh, java/scripts/check-native-jar.sh)
# refuse what would raise the floor, shown on real libraries built here with the host compiler
# and read by the same readelf the checks use (a readelf output written by hand would only show
# that the parser agrees with its author):
#  * a library calling arc4random (GLIBC_2.36) and _dl_find_object (GLIBC_2.35), the two calls
#    that once raised the floor from 2.34, fails both checks and is named with its symbols;
#  * a library bound to GCC 12's libgcc_s (GCC_12.0.0, absent from RHEL 9's GCC 11) fails;
#  * a library needing libstdc++.so.6 fails;
#  * the same libraries without those calls pass, libgcc_s's unwinder (GCC_3.3) included, so a
#    failure above is the floor's and not the test's.
#
#   check_floor_test.sh SOURCE_DIR
# Needs the build machine's glibc 2.36 or newer (arc4random), as Debian 12 has.
set -euo pipefail
src=$1
. "$src/scripts/native-floor.sh"
libs="bash $src/scripts/check-native-libs.sh"
jar="bash $src/java/scripts/check-native-jar.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_pass NAME COMMAND... / expect_fail NAME 'EXPECTED TEXT' COMMAND...
expect_pass() {
  local name=$1; shift
  if "$@" >"$name.out" 2>&1; then ok "$name passes: $(tail -n2 "$name.out" | head -n1)"; else bad "$name: $(cat "$name.out")"; fi
}
expect_fail() {
  local name=$1 want=$2; shift 2
  if "$@" >"$name.out" 2>&1; then
    bad "$name passed, but must fail: $(cat "$name.out")"
  elif grep -qF -- "$want" "$name.out"; then
    ok "$name refused: $(tail -n1 "$name.out")"
  else
    bad "$name failed without saying '$want': $(cat "$name.out")"
  fi
}

# What the bad libraries need must lie above the floor, or they prove nothing.
wt_version_le 2.36 "$WT_GLIBC_FLOOR" && { echo "FAIL: the floor $WT_GLIBC_FLOOR admits arc4random; pick a newer symbol"; exit 1; }
wt_version_le 12.0.0 "$WT_GCC_MAX" && { echo "FAIL: GCC_$WT_GCC_MAX admits GCC_12.0.0; pick a newer version"; exit 1; }

cat >base.c <<'C'
#define _GNU_SOURCE
#include <sys/random.h>
#include <unwind.h>
static _Unwind_Reason_Code count(struct _Unwind_Context* c, void* n) { (void)c; ++*(int*)n; return _URC_NO_REASON; }
__attribute__((visibility("default"))) int wt_depth(void) { int n = 0; _Unwind_Backtrace(count, &n); return n; }
__attribute__((visibility("default"))) long wt_random(void) { long x = 0; return getrandom(&x, sizeof x, 0) < 0 ? -1 : x; }
#ifdef NEW_GLIBC
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
__attribute__((visibility("default"))) uint32_t wt_seed(void) { return arc4random(); }
__attribute__((visibility("default"))) int wt_find(void* pc) { struct dl_find_object o; return _dl_find_object(pc, &o); }
#endif
#ifdef NEW_LIBGCC
extern _Float16 __truncdfhf2(double);
__asm__(".symver __truncdfhf2, __truncdfhf2@GCC_12.0.0");
__attribute__((visibility("default"))) _Float16 wt_half(double x) { return __truncdfhf2(x); }
#endif
C
cat >jni.c <<'C'
#define JNI_ENTRY __attribute__((visibility("default")))
JNI_ENTRY int JNI_OnLoad(void* vm, void* reserved) { (void)vm; (void)reserved; return 0x00010008; }
JNI_ENTRY void JNI_OnUnload(void* vm, void* reserved) { (void)vm; (void)reserved; }
#ifdef NEW_GLIBC
#include <stdlib.h>
JNI_ENTRY long Java_io_weighted_Probe_answer(void* env, void* cls) { (void)env; (void)cls; return arc4random(); }
#else
JNI_ENTRY long Java_io_weighted_Probe_answer(void* env, void* cls) { (void)env; (void)cls; return 42; }
#endif
C
cat >cxx.cc <<'C'
#include <string>
extern "C" __attribute__((visibility("default"))) unsigned long wt_length(const char* s) { return std::string(s).size(); }
C
cc_so() { local out=$1; shift; cc -O2 -shared -fPIC -fvisibility=hidden -Wall -Werror -o "$out" "$@"; }
cc_so ok.so base.c
cc_so new-glibc.so -DNEW_GLIBC base.c
cc_so new-libgcc.so -DNEW_LIBGCC base.c
c++ -O2 -shared -fPIC -fvisibility=hidden -o cxx.so cxx.cc

expect_pass check-native-libs-old-enough $libs --exports '^wt_' ok.so
grep -q 'libgcc_s GCC_3.3' check-native-libs-old-enough.out \
  && ok "libgcc_s.so.1 and its GCC_3.3 are allowed and printed" \
  || bad "no 'libgcc_s GCC_3.3' in $(cat check-native-libs-old-enough.out)"
expect_fail check-native-libs-glibc-2.36 \
  "needs GLIBC_2.35 (_dl_find_object) GLIBC_2.36 (arc4random), newer than the glibc floor $WT_GLIBC_FLOOR" \
  $libs --exports '^wt_' ok.so new-glibc.so
expect_fail check-native-libs-gcc-12 \
  "needs GCC_12.0.0 of libgcc_s.so.1 (__truncdfhf2), newer than GCC_$WT_GCC_MAX" \
  $libs --exports '^wt_' new-libgcc.so
expect_fail check-native-libs-libstdc++ "needs libstdc++.so.6: libstdc++ must be linked in" \
  $libs --exports '^wt_' cxx.so

# The jar check: one platform, the host's, and one declared native.
case $(uname -m) in x86_64) platform=linux-x86_64 ;; aarch64) platform=linux-aarch64 ;; *) echo "FAIL: no platform for $(uname -m)"; exit 1 ;; esac
mkdir -p headers
echo 'JNIEXPORT jlong JNICALL Java_io_weighted_Probe_answer(JNIEnv *, jclass);' >headers/io_weighted_Probe.h
make_jar() {  # make_jar NAME [CFLAGS...]
  local name=$1; shift
  rm -rf "$name.d" && mkdir -p "$name.d/native/$platform"
  cc_so "$name.d/native/$platform/libweightedjni.so" "$@" jni.c
  (cd "$name.d" && python3 -m zipfile -c "../$name.jar" native)
}
make_jar ok-jni
make_jar new-glibc-jni -DNEW_GLIBC
expect_pass check-native-jar-old-enough $jar ok-jni.jar headers "$platform"
expect_fail check-native-jar-glibc-2.36 "needs GLIBC_2.36 (arc4random), newer than the glibc floor $WT_GLIBC_FLOOR" \
  $jar new-glibc-jni.jar headers "$platform"

echo "native floor checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
