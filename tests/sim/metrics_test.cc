// The metric definitions of docs/benchmark.md, on small hand-made series.
#include <gtest/gtest.h>

#include "weighted_sim/metrics.h"

namespace weighted_sim {
namespace {

TEST(Metrics, MeanSuccessTpsDividesByDuration) {
  EXPECT_DOUBLE_EQ(MeanSuccessTps({10, 20, 30, 40}, 4.0), 25.0);
  EXPECT_DOUBLE_EQ(MeanSuccessTps({10, 20}, 4.0), 7.5);  // idle seconds count
}

TEST(Metrics, MaxErrorRateIsPerOneSecondBin) {
  // Bins: 0/10, 1/10, 5/10 -> 0.5; an empty bin is skipped, not 0/0.
  EXPECT_DOUBLE_EQ(MaxErrorRate({10, 9, 5, 0}, {0, 1, 5, 0}), 0.5);
  EXPECT_DOUBLE_EQ(MaxErrorRate({0}, {3}), 1.0);
}

TEST(Metrics, MaxWindowErrorRateCountsOnlyWindowsWhollyInside) {
  // 100 completions a second; 50 errors in bin 2 and 10 in bin 12.
  std::vector<int64_t> ok(20, 100), err(20, 0);
  err[2] = 50, ok[2] = 50;
  err[12] = 10, ok[12] = 90;
  // From 0: the window over bins 0..4 holds bin 2 (50 of 500).
  EXPECT_DOUBLE_EQ(*MaxWindowErrorRate(ok, err, 0, 20), 0.1);
  // From 3 on, bin 2 is outside every window: bin 12's 10 of 500 is the worst.
  EXPECT_DOUBLE_EQ(*MaxWindowErrorRate(ok, err, 3, 20), 0.02);
  // Up to 12 (exclusive), bin 12 is outside too.
  EXPECT_DOUBLE_EQ(*MaxWindowErrorRate(ok, err, 3, 12), 0.0);
  // Shorter than one window: none.
  EXPECT_FALSE(MaxWindowErrorRate(ok, err, 3, 7).has_value());
}

// 20 s: onset at 5, errors at 5..7, everything fine from 8 on.
struct Fixture {
  std::vector<int64_t> ok = std::vector<int64_t>(20, 100);
  std::vector<int64_t> err = std::vector<int64_t>(20, 0);
  std::vector<int64_t> oracle = std::vector<int64_t>(20, 100);
};

TEST(Metrics, RecoveryWaitsForTheMovingWindowToClear) {
  Fixture f;
  f.err[5] = f.err[6] = f.err[7] = 50;
  // The 5-s window at k covers k-4..k, so it holds errors until k = 11 (bins 7..11 has bin 7);
  // the first clean window is k = 12, ending at 13 s: 13 - 5 = 8 s.
  EXPECT_EQ(RecoveryTime(f.ok, f.err, f.oracle, 5, 20), 8.0);
}

TEST(Metrics, RecoveryIsZeroWhenNothingBroke) {
  Fixture f;
  EXPECT_EQ(RecoveryTime(f.ok, f.err, f.oracle, 5, 20), 0.0);
}

TEST(Metrics, RecoveryNeedsNinetyPercentOfTheOracle) {
  Fixture f;
  for (int i = 5; i < 20; ++i) f.ok[i] = 89;  // no errors, but below 90% of the oracle
  EXPECT_FALSE(RecoveryTime(f.ok, f.err, f.oracle, 5, 20).has_value());
  for (int i = 5; i < 20; ++i) f.oracle[i] = 98;  // now 89 >= 0.9 x 98
  EXPECT_EQ(RecoveryTime(f.ok, f.err, f.oracle, 5, 20), 0.0);
}

TEST(Metrics, RecoveryMustHoldUntilTheNextEvent) {
  Fixture f;
  f.err[5] = 50;
  f.err[15] = 50;  // breaks again before the next event at 18
  // The window is clean from k = 10 to 14, dirty from 15 to 17: the run that reaches the
  // next event starts only at k = 20 > 17: never.
  EXPECT_FALSE(RecoveryTime(f.ok, f.err, f.oracle, 5, 18).has_value());
  // With the next event at 15, the breakage lies after it and does not count.
  EXPECT_EQ(RecoveryTime(f.ok, f.err, f.oracle, 5, 15), 6.0);  // k = 10: 11 - 5
}

TEST(Metrics, RecoveryAcceptsOnePercentButNotMore) {
  Fixture f;
  for (int i = 5; i < 20; ++i) f.err[i] = 1;  // 1/101 < 1%
  EXPECT_EQ(RecoveryTime(f.ok, f.err, f.oracle, 5, 20), 0.0);
  for (int i = 5; i < 20; ++i) f.err[i] = 2;  // 2/102 > 1%
  EXPECT_FALSE(RecoveryTime(f.ok, f.err, f.oracle, 5, 20).has_value());
}

TEST(Metrics, ReadmissionWaitsForNinetyPercentOfTheFairShare) {
  std::vector<int64_t> total(30, 90);
  std::vector<int64_t> backend(30, 0);
  for (int i = 20; i < 30; ++i) backend[i] = 30;  // a full third from 20 s on
  // Fair share 1/3 -> needs a 5-s share >= 0.3: window k has (k-19) x 30 of 450 requests,
  // >= 135 at k = 23 (4 bins of 30 = 120 < 135) -> k = 24, ending at 25: 25 - 20 = 5 s.
  EXPECT_EQ(ReadmissionTime(backend, total, 1.0 / 3, 20, 30), 5.0);
  EXPECT_FALSE(ReadmissionTime(backend, total, 1.0 / 3, 20, 23).has_value());
  std::vector<int64_t> never(30, 0);
  EXPECT_FALSE(ReadmissionTime(never, total, 1.0 / 3, 20, 30).has_value());
}

TEST(Metrics, PercentileIsNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  EXPECT_EQ(Percentile(v, 0.5), 500);
  EXPECT_EQ(Percentile(v, 0.99), 990);
  EXPECT_EQ(Percentile(v, 0.999), 999);
  EXPECT_EQ(Percentile({7.0}, 0.999), 7.0);
  EXPECT_EQ(Percentile({}, 0.5), 0.0);
}

}  // namespace
}  // namespace weighted_sim
