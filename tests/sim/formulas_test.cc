// Each peer policy's core formula, against values computed by hand from its published source.
#include <gtest/gtest.h>

#include <cmath>

#include "weighted_sim/formulas.h"

namespace weighted_sim::formulas {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(PeakEwma, PeakJumpsUpAndDecaysDown) {
  PeakEwmaState s;
  PeakEwmaObserve(s, 0, 100, 10'000);
  EXPECT_EQ(s.cost_ms, 100);  // rtt > cost: the peak is taken at once
  PeakEwmaObserve(s, 10'000 * kMs, 20, 10'000);
  // One decay time later: w = e^-1, cost = 100 w + 20 (1 - w).
  const double w = std::exp(-1.0);
  EXPECT_NEAR(s.cost_ms, 100 * w + 20 * (1 - w), 1e-9);
}

TEST(PeakEwma, LoadIsCostTimesPendingPlusOneAndDecaysOnRead) {
  PeakEwmaState s;
  PeakEwmaObserve(s, 0, 50, 10'000);
  s.pending = 2;
  EXPECT_NEAR(PeakEwmaLoad(s, 0, 10'000), 150, 1e-9);
  // Reading observes a zero rtt: the cost decays toward 0 while nothing comes back.
  EXPECT_NEAR(PeakEwmaLoad(s, 10'000 * kMs, 10'000), 150 * std::exp(-1.0), 1e-9);
}

TEST(PeakEwma, NoHistoryWithPendingGetsFinaglesPenalty) {
  PeakEwmaState s;
  EXPECT_EQ(PeakEwmaLoad(s, 0, 10'000), 0);  // nothing pending: load 0, it will be tried
  s.pending = 3;
  EXPECT_EQ(PeakEwmaLoad(s, 0, 10'000), kFinaglePenalty + 3);
  EXPECT_EQ(kFinaglePenalty, static_cast<double>(9223372036854775807LL >> 16));
}

TEST(GrpcWrr, WeightIsQpsOverUtilizationPlusErrorPenalty) {
  EXPECT_DOUBLE_EQ(GrpcWrrWeight(100, 0, 0.5, 1.0), 200);
  // eps / qps x penalty: 10 / 100 x 1.0 = 0.1 added to the utilization.
  EXPECT_DOUBLE_EQ(GrpcWrrWeight(100, 10, 0.5, 1.0), 100 / 0.6);
  EXPECT_EQ(GrpcWrrWeight(0, 0, 0.5, 1.0), 0);   // no qps: unusable
  EXPECT_EQ(GrpcWrrWeight(100, 0, 0, 1.0), 0);   // no utilization: unusable
}

TEST(GrpcWrr, StrideWeightsScaleClampAndFillUnknownWithTheMean) {
  EXPECT_FALSE(GrpcStrideWeights({1.0f}).has_value());          // one endpoint: round-robin
  EXPECT_FALSE(GrpcStrideWeights({0.0f, 0.0f}).has_value());    // all unknown: round-robin
  const auto w = GrpcStrideWeights({100.0f, 50.0f, 0.0f});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ((*w)[0], 65535);                                    // the max scales to 65535
  const double scale = 65535 / 100.0f;  // float division, as gRPC computes it
  EXPECT_EQ((*w)[1], static_cast<uint16_t>(std::lround(50.0f * scale)));
  EXPECT_EQ((*w)[2], static_cast<uint16_t>(std::lround(scale * 75.0)));  // unknown = the mean
  // 20 endpoints, one at 10000 and 19 at 1: mean ~501, so the max is clamped to 10 x mean and
  // scaled to 65535 (the mean becomes ~6554), and the 1s are raised to 1% of that mean.
  std::vector<float> big(20, 1.0f);
  big[0] = 10000.0f;
  const auto c = GrpcStrideWeights(big);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ((*c)[0], 65535);
  EXPECT_NEAR((*c)[1], 66, 1);  // unclamped it would be ~13
}

TEST(GrpcWrr, StridePicksInProportionToWeights) {
  const std::vector<uint16_t> w = {65535, 32768, 16384};
  std::vector<int> count(3, 0);
  int picks = 0;
  for (uint64_t seq = 0; picks < 70000; ++seq) {
    if (auto i = GrpcStridePick(w, seq)) {
      ++count[*i];
      ++picks;
    }
  }
  EXPECT_NEAR(count[0] / 70000.0, 4.0 / 7, 0.01);
  EXPECT_NEAR(count[1] / 70000.0, 2.0 / 7, 0.01);
  EXPECT_NEAR(count[2] / 70000.0, 1.0 / 7, 0.01);
}

TEST(Envoy, MaxEjectionPercentForbidsEjectingOneOfThree) {
  EXPECT_FALSE(EnvoyMayEject(0, 3, 10, false));   // 1/3 = 33% > 10%
  EXPECT_FALSE(EnvoyMayEject(0, 9, 10, false));   // 11% > 10%
  EXPECT_TRUE(EnvoyMayEject(0, 10, 10, false));   // 10% <= 10%
  EXPECT_FALSE(EnvoyMayEject(1, 10, 10, false));
  EXPECT_TRUE(EnvoyMayEject(0, 3, 10, true));     // always_eject_one_host
  EXPECT_FALSE(EnvoyMayEject(1, 3, 10, true));    // ... but only one
}

TEST(Envoy, EjectionTimeGrowsWithBackoffUpToTheMax) {
  const int64_t base = 30, max = 300;
  EXPECT_EQ(EnvoyEjectionNs(base, 1, max), 30);
  EXPECT_EQ(EnvoyEjectionNs(base, 3, max), 90);
  EXPECT_EQ(EnvoyEjectionNs(base, 11, max), 300);
}

TEST(Envoy, LeastRequestWeightDividesByActivePlusOne) {
  EXPECT_DOUBLE_EQ(EnvoyLeastRequestWeight(4, 0, 1.0), 4);
  EXPECT_DOUBLE_EQ(EnvoyLeastRequestWeight(4, 3, 1.0), 1);
  EXPECT_DOUBLE_EQ(EnvoyLeastRequestWeight(4, 3, 0.5), 2);
}

TEST(Oracle, ExpectedDelayCountsTheQueueAhead) {
  EXPECT_DOUBLE_EQ(ExpectedDelayMs(20, 0, 8), 20);
  EXPECT_DOUBLE_EQ(ExpectedDelayMs(20, 7, 8), 20);       // a worker is still free
  EXPECT_DOUBLE_EQ(ExpectedDelayMs(20, 8, 8), 22.5);     // waits for one of 8 to finish
  EXPECT_DOUBLE_EQ(ExpectedDelayMs(20, 15, 8), 20 + 8 * 2.5);
}

}  // namespace
}  // namespace weighted_sim::formulas
