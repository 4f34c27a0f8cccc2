// A seed from the operating system, for an engine configured without one (config `seed` 0).
//
// Not std::random_device: libstdc++ (GCC 12) implements it with arc4random where glibc has it,
// and with libstdc++ linked into our libraries (cmake/StaticRuntime.cmake) that one call made
// every shipped library need glibc 2.36. getrandom(2) is in glibc 2.25, far below the floor
// (scripts/native-floor.sh). It can still fail: ENOSYS on a kernel older than 3.17 or under a
// seccomp filter that predates it, EPERM under some container runtimes, EAGAIN at early boot
// (we never block for it: a picker's seed spreads clients apart, it guards no secret), EINTR
// on a signal. Then /dev/urandom, and if even that cannot be read (a chroot with no /dev) the
// clocks and a few addresses (ASLR) mixed together, which still set engines apart.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace weighted {

// Where RandomSeed draws from; the tests substitute each one.
struct EntropySources {
  // getrandom(2): bytes written, or -1 with errno set.
  ssize_t (*getrandom)(void* buf, size_t len, unsigned int flags);
  // Fills all of buf from /dev/urandom; false if it cannot.
  bool (*read_urandom)(void* buf, size_t len);
  // Nanoseconds from the clocks, for the last resort.
  uint64_t (*clock_ns)();
};

// The real ones: glibc's getrandom, /dev/urandom, CLOCK_MONOTONIC and CLOCK_REALTIME.
const EntropySources& SystemEntropy();

// 64 bits from the first source that delivers them. Never fails, never blocks.
uint64_t RandomSeed(const EntropySources& sources = SystemEntropy());

}  // namespace weighted
