// The simulator's own random numbers: xoshiro256** seeded through splitmix64, with the
// distributions written out here rather than taken from <random>, so a seed gives the same
// numbers bit for bit on every standard library (only libm's log/exp/sqrt/cos are shared).
#pragma once

#include <cstdint>

namespace weighted_sim {

class Rng {
 public:
  // `stream` separates independent sequences drawn from one seed (per backend, per caller, ...).
  explicit Rng(uint64_t seed = 1, uint64_t stream = 0);

  uint64_t Next();                 // 64 uniform bits
  double Uniform();                // [0, 1), 53 bits
  uint64_t Below(uint64_t n);      // [0, n), unbiased (Lemire); n > 0
  double Exponential(double mean); // mean > 0
  double StandardNormal();         // Box-Muller (both halves used)
  // Lognormal with the given arithmetic mean and log-space sigma: mu = ln(mean) - sigma^2 / 2.
  double LogNormal(double mean, double log_sigma);
  bool Bernoulli(double p) { return p > 0 && Uniform() < p; }

 private:
  uint64_t s_[4];
  bool have_spare_ = false;
  double spare_ = 0;
};

// Mixes a seed and a stream id into one well-spread 64-bit value (splitmix64 finaliser).
uint64_t MixSeed(uint64_t seed, uint64_t stream);

}  // namespace weighted_sim
