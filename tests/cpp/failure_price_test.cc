// The load-aware picker's failure price as the fleet shapes it: how much the fast estimate counts
// (FleetFailures, and the alternative candidate's evidence), and which clean cycles make an
// endpoint forget its steady share.
#include <gtest/gtest.h>

#include "pick/load_estimate.h"
#include "weighted/weighted.h"

namespace weighted {
namespace {

constexpr double kDecayNs = 10e9;

// `n` outcomes one millisecond apart, every `every`-th failed (0: none).
void Feed(LoadEstimate& e, int n, int every, int64_t* now) {
  for (int i = 1; i <= n; ++i) {
    *now += 1'000'000;
    e.Record(20, every > 0 && i % every == 0, *now, kDecayNs);
  }
}

CycleSample Clean(uint64_t successes) {
  CycleSample s;
  s.outcomes[WT_OUTCOME_SUCCESS] = successes;
  return s;
}

TEST(FailurePrice, TheFastEstimateCountsFullyWhenOneEndpointStandsOutOrNoneFails) {
  int64_t now = 0;
  LoadEstimate sick, well1, well2;
  Feed(sick, 200, 7, &now);  // ~14%
  Feed(well1, 200, 0, &now);
  Feed(well2, 200, 0, &now);
  FleetFailures f;
  for (const LoadEstimate* e : {&sick, &well1, &well2}) f.Add(*e);
  EXPECT_DOUBLE_EQ(f.FastWeight(), 1.0);
  FleetFailures clean;
  clean.Add(well1);
  clean.Add(well2);
  EXPECT_DOUBLE_EQ(clean.FastWeight(), 1.0) << "a clean fleet: any failure is news";
}

TEST(FailurePrice, WhenEveryEndpointFailsAlikeTheStreaksOfOneDoNotSetItsPrice) {
  // Three endpoints failing 5% each, one of them in a streak just now: its fast estimate reads
  // ~3 times its steady share. That is noise of a shared fault, not news of this endpoint.
  int64_t now = 0;
  LoadEstimate a, b, c;
  Feed(a, 2000, 20, &now);
  Feed(b, 2000, 20, &now);
  Feed(c, 1980, 20, &now);
  for (int i = 0; i < 3; ++i) {
    now += 1'000'000;
    c.Record(20, true, now, kDecayNs);
  }
  FleetFailures f;
  for (const LoadEstimate* e : {&a, &b, &c}) f.Add(*e);
  const double w = f.FastWeight();
  EXPECT_LT(w, 0.01);
  EXPECT_GT(c.failure_ewma.load(), 2.5 * c.SteadyShare());
  EXPECT_NEAR(c.PricedShare(w), c.SteadyShare(), 0.002);
  EXPECT_NEAR(c.PricedShare(1.0), c.FailureShare(), 1e-12) << "full weight: the larger of the two";
}

// `n` outcomes one millisecond apart, failed where `failed(i)` (i from 1).
template <typename F>
void FeedWhere(LoadEstimate& e, int n, F failed, int64_t* now) {
  for (int i = 1; i <= n; ++i) {
    *now += 1'000'000;
    e.Record(20, failed(i), *now, kDecayNs);
  }
}

TEST(FailurePrice, AFastEstimateWithinTheNoiseOfTheAlternativesIsNotPriced) {
  // A fault shared by every endpoint has just begun: no steady share has moved, and of the last
  // 30 outcomes one endpoint failed 3 and the other 1, which a shared 5% gives by chance.
  int64_t now = 0;
  LoadEstimate a, b;
  Feed(a, 2000, 0, &now);
  Feed(b, 2000, 0, &now);
  FeedWhere(a, 30, [](int i) { return i % 10 == 0; }, &now);
  FeedWhere(b, 30, [](int i) { return i == 15; }, &now);
  ASSERT_GT(a.failure_ewma.load(), 4 * b.failure_ewma.load());
  ASSERT_LT(a.SteadyShare(), 0.01);
  // Against b, a's streak is not news: a costs what its steady share says.
  EXPECT_DOUBLE_EQ(a.PricedShare(1.0, b.FailureShare()), a.SteadyFloor());
  EXPECT_DOUBLE_EQ(b.PricedShare(1.0, a.FailureShare()), b.SteadyFloor());
  // Against a clean alternative the same estimate is news, priced at once and fully.
  EXPECT_DOUBLE_EQ(a.PricedShare(1.0, 0.0), a.FailureShare());
  EXPECT_DOUBLE_EQ(a.PricedShare(1.0), a.FailureShare()) << "the default alternative is clean";
  EXPECT_GT(a.PricedShare(1.0, 0.0), 0.1);
}

TEST(FailurePrice, ASinkholeIsNewsAgainstAnAlternativeThatFailsALittle) {
  // What the sinkhole protection rests on: ten fast failures in a row stand out against an
  // alternative that failed once in 30, and still follow the fleet's weight on the fast estimate.
  int64_t now = 0;
  LoadEstimate sink, b;
  Feed(sink, 2000, 0, &now);
  Feed(b, 2000, 0, &now);
  FeedWhere(sink, 10, [](int) { return true; }, &now);
  FeedWhere(b, 30, [](int i) { return i == 15; }, &now);
  EXPECT_DOUBLE_EQ(sink.PricedShare(1.0, b.FailureShare()), sink.FailureShare());
  EXPECT_GT(sink.PricedShare(1.0, b.FailureShare()), 0.4);
  EXPECT_NEAR(sink.PricedShare(0.5, b.FailureShare()),
              sink.SteadyFloor() + 0.5 * (sink.failure_ewma.load() - sink.SteadyFloor()), 1e-12);
}

TEST(FailurePrice, ACleanCycleForgetsOnlyTheSteadyShareThatSetTheEndpointApart) {
  int64_t now = 0;
  // Failing 5% like its fleet: a clean cycle clears the fast estimate, the steady one decays.
  LoadEstimate alike;
  Feed(alike, 2000, 20, &now);
  const double before = alike.SteadyShare();
  alike.NewCycle(1, Clean(50), 3, 0.05);
  EXPECT_EQ(alike.failure_ewma.load(), 0.0);
  EXPECT_NEAR(alike.SteadyShare(), before, 1e-12);
  // Failing 50% against a fleet at 5%: back within the cycle, as a recovered endpoint must be.
  LoadEstimate apart;
  Feed(apart, 200, 2, &now);
  apart.NewCycle(1, Clean(50), 3, 0.05);
  EXPECT_EQ(apart.SteadyShare(), 0.0);
  // Too few results in the cycle: nothing is forgotten.
  LoadEstimate thin;
  Feed(thin, 200, 2, &now);
  const double fast = thin.failure_ewma.load();
  thin.NewCycle(1, Clean(2), 3, 0.05);
  EXPECT_DOUBLE_EQ(thin.failure_ewma.load(), fast * 0.5);
  EXPECT_GT(thin.SteadyShare(), 0.4);
}

}  // namespace
}  // namespace weighted
