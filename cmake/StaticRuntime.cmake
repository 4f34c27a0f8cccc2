# The C++ runtime (libstdc++, libgcc) is linked into each library we ship (libweighted.so, the
# JNI library, the Python modules) instead of being a run-time dependency: only the C API
# crosses a library boundary, so no C++ object, exception or allocation ever meets another
# copy of the runtime, and the platform floor becomes glibc alone (a JVM or Python host with an
# older libstdc++ than our compiler's then loads them). Each library's version script (or
# --exclude-libs for one without) keeps the runtime's symbols local, so it neither exports nor
# interposes on the libstdc++ of the process. The sanitizer presets turn this off: their
# runtimes expect to intercept the shared C++ runtime.
option(WT_STATIC_CXX_RUNTIME "Link libstdc++ and libgcc statically into the shipped libraries" ON)

function(wt_static_cxx_runtime target)
  if(NOT WT_STATIC_CXX_RUNTIME)
    return()
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "WT_STATIC_CXX_RUNTIME needs GCC or Clang (-static-libstdc++); "
                        "configure with -DWT_STATIC_CXX_RUNTIME=OFF")
  endif()
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
endfunction()
