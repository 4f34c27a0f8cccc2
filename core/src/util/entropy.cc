#include "util/entropy.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace weighted {

namespace {

// A signal may interrupt getrandom again and again; after this many tries /dev/urandom is as good.
constexpr int kMaxInterrupted = 8;

ssize_t SystemGetrandom(void* buf, size_t len, unsigned int flags) {
  return ::getrandom(buf, len, flags);
}

bool SystemReadUrandom(void* buf, size_t len) {
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  auto* p = static_cast<unsigned char*>(buf);
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::read(fd, p + done, len - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // an error, or end of file on something that is not the random device
    }
  }
  ::close(fd);
  return done == len;
}

uint64_t SystemClockNs() {
  timespec mono{}, real{};
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  ::clock_gettime(CLOCK_REALTIME, &real);
  const auto ns = [](const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
  };
  return ns(mono) ^ (ns(real) << 1);
}

// splitmix64's finaliser: every input bit moves about half the output bits.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool FromGetrandom(const EntropySources& s, unsigned char* buf, size_t len) {
  size_t done = 0;
  int interrupted = 0;
  while (done < len) {
    const ssize_t n = s.getrandom(buf + done, len - done, GRND_NONBLOCK);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR && ++interrupted < kMaxInterrupted) {
      continue;
    } else {
      return false;  // ENOSYS, EPERM, EAGAIN (pool not ready), or a signal storm
    }
  }
  return true;
}

}  // namespace

const EntropySources& SystemEntropy() {
  static constexpr EntropySources kSystem{SystemGetrandom, SystemReadUrandom, SystemClockNs};
  return kSystem;
}

uint64_t RandomSeed(const EntropySources& sources) {
  unsigned char buf[sizeof(uint64_t)];
  if (FromGetrandom(sources, buf, sizeof buf) || sources.read_urandom(buf, sizeof buf)) {
    uint64_t seed;
    std::memcpy(&seed, buf, sizeof seed);
    return seed;
  }
  // Two engines of one process differ by the clock; two processes started at the same instant
  // differ by where ASLR put the stack and the library, and by their pids.
  static const int kAnchor = 0;
  const int local = 0;
  uint64_t x = Mix(sources.clock_ns());
  x = Mix(x ^ reinterpret_cast<uintptr_t>(&local));
  x = Mix(x ^ reinterpret_cast<uintptr_t>(&kAnchor));
  return Mix(x ^ static_cast<uint64_t>(::getpid()));
}

}  // namespace weighted
