# libstdc++ is linked into each library we ship (libweighted.so, the JNI library, the Python
# modules) instead of being a run-time dependency: only the C API crosses a library boundary, so
# no C++ object, exception or allocation ever meets another copy of it, and a JVM or Python host
# with an older libstdc++ than our compiler's still loads them. Each library's version script
# (or --exclude-libs for one without) keeps its symbols local, so it neither exports nor
# interposes on the libstdc++ of the process.
#
# libgcc stays shared (libgcc_s.so.1). Its static half holds the unwinder (libgcc_eh), which in
# GCC 12 finds unwind tables through _dl_find_object: linked in, it alone made every library
# need glibc 2.35. The shared libgcc_s is the machine's own, built for its glibc, and every
# glibc system has it (glibc itself loads it to cancel threads; Debian's libgcc-s1 is priority
# required, RHEL's libgcc is in every base image). We need only old symbol versions of it, the
# unwinder's and a few arithmetic helpers' (GCC_3.0 .. GCC_4.5.0); scripts/native-floor.sh holds
# that maximum and the glibc floor, and the checks fail past either.
#
# Not calling std::random_device (util/entropy.h) is not enough to keep arc4random (glibc 2.36)
# out: libstdc++.a's random.o, which calls it, is pulled in by cow-string-inst.o (a shim of the
# old string ABI's random_device constructor), which std::runtime_error's own object needs. Its
# sections are separate (libstdc++ is built with -ffunction-sections), so --gc-sections drops
# what nothing reaches from the exported symbols, and the reference to arc4random with it.
#
# The sanitizer presets turn this off: their runtimes expect to intercept the shared libstdc++.
option(WT_STATIC_CXX_RUNTIME "Link libstdc++ statically into the shipped libraries (libgcc_s stays shared)" ON)

function(wt_static_cxx_runtime target)
  if(NOT WT_STATIC_CXX_RUNTIME)
    return()
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "WT_STATIC_CXX_RUNTIME needs GCC or Clang (-static-libstdc++); "
                        "configure with -DWT_STATIC_CXX_RUNTIME=OFF")
  endif()
  # -shared-libgcc is the driver's default for a shared object; said outright because the
  # floor depends on it.
  target_link_options(${target} PRIVATE -static-libstdc++ -shared-libgcc -Wl,--gc-sections)
endfunction()
