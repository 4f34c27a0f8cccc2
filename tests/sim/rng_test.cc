// The simulator's own random numbers: reproducible, independent streams, right moments.
#include <gtest/gtest.h>

#include <cmath>

#include "weighted_sim/rng.h"

namespace weighted_sim {
namespace {

TEST(Rng, SameSeedSameStreamSameNumbers) {
  Rng a(42, 3), b(42, 3), c(42, 4), d(43, 3);
  bool differs_c = false, differs_d = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs_c |= x != c.Next();
    differs_d |= x != d.Next();
  }
  EXPECT_TRUE(differs_c);
  EXPECT_TRUE(differs_d);
}

TEST(Rng, DistributionsHaveTheirMeans) {
  Rng r(7);
  const int n = 200000;
  double u = 0, e = 0, ln = 0, ln_log = 0, below = 0;
  for (int i = 0; i < n; ++i) {
    u += r.Uniform();
    e += r.Exponential(50);
    const double x = r.LogNormal(20, 0.5);
    ln += x;
    ln_log += std::log(x);
    below += static_cast<double>(r.Below(10));
  }
  EXPECT_NEAR(u / n, 0.5, 0.01);
  EXPECT_NEAR(e / n, 50, 1.0);
  EXPECT_NEAR(ln / n, 20, 0.3);                                   // arithmetic mean 20 ms
  EXPECT_NEAR(ln_log / n, std::log(20.0) - 0.125, 0.01);          // mu = ln(mean) - s^2/2
  EXPECT_NEAR(below / n, 4.5, 0.05);
}

TEST(Rng, BelowStaysInRange) {
  Rng r(1);
  for (int i = 0; i < 10000; ++i) EXPECT_LT(r.Below(3), 3u);
}

}  // namespace
}  // namespace weighted_sim
