// The picker's per-thread random stream and round-robin position. Each thread that picks owns
// one per engine (it lives in the thread's reader record, runtime/reclaim.h, so a pick finds it
// with the one thread-local lookup it already makes): drawing writes no shared memory.
#pragma once

#include <cstdint>

namespace weighted {

// splitmix64's finaliser: turns (seed, stream number) into well-spread starting states.
inline uint64_t MixBits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct PickerRandom {
  uint64_t state = 0;  // wyrand state
  uint32_t rr = 0;     // round-robin position for panic mode

  // The n-th stream of an engine seeded with `seed`. The round-robin position starts at a random
  // place, so that a fleet of clients does not move in lockstep (Envoy's seed_).
  void Seed(uint64_t seed, uint64_t n) {
    state = MixBits(seed ^ MixBits(n));
    rr = static_cast<uint32_t>(Next());
  }

  uint64_t Next() {  // wyrand: fast, passes BigCrush; one multiply per draw
    state += 0xa0761d6478bd642full;
    __uint128_t m = static_cast<__uint128_t>(state) * (state ^ 0xe7037ed1a0b428dbull);
    return static_cast<uint64_t>(m >> 64) ^ static_cast<uint64_t>(m);
  }
};

}  // namespace weighted
