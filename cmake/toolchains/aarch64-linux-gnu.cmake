# Cross-compiling for linux-aarch64 on an x86-64 Debian host with Debian's own cross toolchain
# (g++-aarch64-linux-gnu, its sysroot in /usr/aarch64-linux-gnu) and qemu-user to run the
# results: scripts/setup.sh installs both when the aarch64 targets ask for them (mk/aarch64.mk).
#
# Dependencies: the engine needs no compiled third-party library for the target. fmt is used
# header-only and nlohmann_json is header-only, so the host's -dev packages serve (their headers
# are architecture-independent; /usr/include is on this compiler's search path, after the
# sysroot's own include directory, so target glibc headers always win). googletest is built for
# the target from Debian's sources in /usr/src/googletest (tests/cpp/CMakeLists.txt). No arm64
# Debian packages are needed, so no `dpkg --add-architecture`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(WT_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${WT_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${WT_CROSS_TRIPLE}-g++)

# Target libraries (libc, libstdc++, libgcc_s) come from the sysroot and nowhere else: a host
# library found by find_library would link and fail only at load time.
set(CMAKE_FIND_ROOT_PATH /usr/${WT_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # javac and qemu run on the host
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# Headers and CMake package files may come from the host: only header-only packages (fmt's
# fmt::fmt-header-only, nlohmann_json) and the JDK's jni.h are looked up. jni_md.h of a Linux
# JDK is the same file on every 64-bit architecture (jint int, jlong long under _LP64).
# Compiled packages must not be found this way (GTest's config would import the host's x86-64
# libgtest.a by absolute path): the project builds those from source when cross-compiling.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# fmt's package file sits in the host's multiarch directory (it also describes the host's
# libfmt.so, which nothing here links), and find_package searches only the target's.
set(_wt_host_fmt /usr/lib/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/cmake/fmt)
if(NOT DEFINED fmt_DIR AND EXISTS ${_wt_host_fmt}/fmt-config.cmake)
  set(fmt_DIR ${_wt_host_fmt} CACHE PATH "fmt's CMake package (used header-only)")
endif()

# CTest and gtest_discover_tests run target executables through qemu; -L points the emulated
# dynamic loader at the sysroot's ld-linux-aarch64.so.1 and libraries.
find_program(WT_QEMU_AARCH64 qemu-aarch64)
if(WT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${WT_QEMU_AARCH64} -L /usr/${WT_CROSS_TRIPLE})
endif()
