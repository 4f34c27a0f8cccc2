// The load-aware picker's per-endpoint estimate (pick/load_estimate.h): the decay without libm,
// the striped in-flight counts and their expiry by cycle stamps.
#include "pick/load_estimate.h"

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace weighted {
namespace {

constexpr InflightStripe kOwn0{0, true}, kOwn1{1, true}, kShared{kInflightStripes - 1, false};

TEST(LoadEstimate, DecayFactorIsExpWithinAPartInABillion) {
  // The report path's ages: dt / tau from nothing to far past any weight that still matters.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log_x(-12, std::log(745.0));
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = std::exp(log_x(rng));
    const double want = std::exp(-x);
    if (want < 1e-300) continue;
    worst = std::max(worst, std::abs(DecayFactor(x) - want) / want);
  }
  EXPECT_LT(worst, 1e-9);
  EXPECT_EQ(DecayFactor(0), 1.0);
  EXPECT_EQ(DecayFactor(-3), 1.0) << "a clock that went back ages nothing";
  EXPECT_EQ(DecayFactor(1e6), 0.0);
  EXPECT_EQ(DecayFactor(INFINITY), 0.0);
  EXPECT_EQ(DecayFactor(NAN), 1.0);
  EXPECT_NEAR(DecayFactor(1.0), std::exp(-1.0), std::exp(-1.0) * 1e-9);
}

TEST(LoadEstimate, PeakEwmaKeepsItsTimeConstant) {
  // A 100 ms peak, then 10 ms answers one per tau / 10: after one tau of them the estimate has
  // come down by e^-1 of the gap, as with std::exp.
  LoadEstimate e;
  const double tau = 1e9;
  e.Record(100, false, 0, tau);
  for (int i = 1; i <= 10; ++i) e.Record(10, false, int64_t(i) * 100000000, tau);
  const double want = 10 + 90 * std::exp(-1.0);
  EXPECT_NEAR(e.ewma_ms.load(), want, want * 1e-9);
}

TEST(LoadEstimate, StripesAddUpWhicheverThreadFinishesAPick) {
  LoadEstimate e;
  e.Begin(5);
  e.Take(5, kOwn0);
  e.Take(5, kOwn1);
  e.Take(5, kShared);
  EXPECT_EQ(e.InFlight(), 3);
  e.Release(5, 5, kOwn1);  // the pick taken on stripe 0, finished by another thread
  e.Release(5, 5, kOwn1);
  EXPECT_EQ(e.InFlight(), 1);
  e.Release(5, 5, kShared);
  EXPECT_EQ(e.InFlight(), 0);
}

TEST(LoadEstimate, CountsExpireAsTheSecondCycleAfterThemBeginsWithoutTheControllerWritingThem) {
  LoadEstimate e;
  CycleSample idle;
  e.Begin(1);
  e.Take(1, kOwn0);
  e.Take(1, kOwn1);
  e.NewCycle(2, idle, 3, 0);
  e.Take(2, kOwn0);
  EXPECT_EQ(e.InFlight(), 3) << "cycle 1's picks live through cycle 2";
  e.NewCycle(3, idle, 3, 0);
  EXPECT_EQ(e.InFlight(), 1) << "cycle 1's picks expired as cycle 3 began";
  // Finishing an expired pick takes nothing; the next pick of that parity starts afresh.
  e.Release(1, 3, kOwn0);
  EXPECT_EQ(e.InFlight(), 1);
  e.Take(3, kOwn1);
  EXPECT_EQ(e.InFlight(), 2);
  e.Release(2, 3, kOwn0);
  e.Release(3, 3, kOwn0);
  EXPECT_EQ(e.InFlight(), 0);
}

TEST(LoadEstimate, ConcurrentOwnersAndSharersLoseNoCount) {
  // Two owners with plain stores and two threads sharing the CAS stripe, each taking and
  // releasing; what stays open at the end is exactly what each left open.
  LoadEstimate e;
  e.Begin(1);
  const InflightStripe stripes[] = {kOwn0, kOwn1, kShared, kShared};
  std::vector<std::thread> threads;
  for (InflightStripe s : stripes) {
    threads.emplace_back([&e, s] {
      for (int i = 0; i < 200000; ++i) {
        e.Take(1, s);
        if (i % 4) e.Release(1, 1, s);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(e.InFlight(), 4 * 50000);
}

}  // namespace
}  // namespace weighted
