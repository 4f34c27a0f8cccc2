#include <array>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "stats/histogram.h"
#include "stats/quantiles.h"
#include "stats/hot_stats.h"
#include "stats/window.h"

namespace weighted {
namespace {

TEST(Histogram, BucketMidpointIsWithinTwoPercentOfEveryValue) {
  for (double us = 1.5; us < 1e8; us *= 1.0007) {
    const double est = BucketValue(BucketOf(us));
    ASSERT_LE(std::abs(est - us) / us, 0.02) << us;
  }
}

TEST(Histogram, QuantilesOfAKnownDistributionAreWithinTwoPercent) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(std::log(20000.0), 0.5);  // micros
  std::vector<double> values;
  AtomicHistogram h;
  for (int i = 0; i < 200000; ++i) {
    values.push_back(d(rng));
    h.Record(BucketOf(values.back()));
  }
  SparseHistogram sparse;
  h.Drain(&sparse);
  std::sort(values.begin(), values.end());
  std::sort(sparse.begin(), sparse.end());
  for (double q : {0.5, 0.95, 0.99}) {
    const double exact = values[static_cast<size_t>(std::ceil(q * values.size())) - 1];
    EXPECT_NEAR(Quantile({&sparse}, q) / exact, 1.0, 0.02) << q;
  }
}

TEST(Histogram, DrainTakesEachRecordExactlyOnce) {
  AtomicHistogram h;
  for (int i = 0; i < 1000; ++i) h.Record(i % kBucketCount);
  SparseHistogram a, b;
  h.Drain(&a);
  h.Drain(&b);
  uint64_t total = 0;
  for (BucketEntry e : a) total += EntryCount(e);
  EXPECT_EQ(total, 1000u);
  EXPECT_TRUE(b.empty());
}

TEST(Histogram, ACountPastAnEntrysRangeIsSplitNotTruncated) {
  SparseHistogram h;
  AppendEntries(&h, 7, uint64_t{kEntryMaxCount} * 2 + 5);
  ASSERT_EQ(h.size(), 3u);
  uint64_t total = 0;
  for (BucketEntry e : h) {
    EXPECT_EQ(EntryBucket(e), 7);
    total += EntryCount(e);
  }
  EXPECT_EQ(total, uint64_t{kEntryMaxCount} * 2 + 5);
  EXPECT_EQ(EntryBucket(MakeEntry(kBucketCount - 1, kEntryMaxCount)), kBucketCount - 1);
}

// The window's two-way walk must agree with the general k-way one on every input, including
// empty parts, one part, equal buckets in both parts and tiny totals.
TEST(Histogram, TwoWayWalkAgreesWithTheGeneralQuantiles) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    SparseHistogram parts[2];
    for (SparseHistogram& h : parts) {
      const int n = static_cast<int>(rng() % 12);  // 0 = an empty part
      const int base = static_cast<int>(rng() % 400);
      for (int i = 0, b = base; i < n; ++i) {
        b += 1 + static_cast<int>(rng() % 3);
        const uint32_t c = 1 + static_cast<uint32_t>(rng() % (round % 3 == 0 ? 2 : 500));
        h.push_back(MakeEntry(b, c));
      }
    }
    const SparseHistogram* both[2] = {&parts[0], &parts[1]};
    static constexpr double kQs[2] = {0.95, 0.99};
    for (int k = 0; k <= 2; ++k) {  // two parts, the first only, none
      double want[2], p95, p99;
      uint64_t t = 0;
      for (int i = 0; i < k; ++i) {
        for (BucketEntry e : parts[i]) t += EntryCount(e);
      }
      QuantilesOfSorted(both, k, kQs, want, 2);
      UpperQuantilesOfTwo(k > 0 ? &parts[0] : nullptr, k > 1 ? &parts[1] : nullptr, t, &p95, &p99);
      ASSERT_EQ(p95, want[0]) << "round " << round << " parts " << k;
      ASSERT_EQ(p99, want[1]) << "round " << round << " parts " << k;
    }
  }
}

TEST(Window, KeepsOnlyTheLastSlotsAndSplitsErrorsByClass) {
  Window w;
  for (int cycle = 0; cycle < 3; ++cycle) {
    HotStats hot;
    for (int i = 0; i < 90; ++i) hot.Record(10.0 * (cycle + 1), WT_OUTCOME_SUCCESS);
    for (int i = 0; i < 10; ++i) hot.Record(5.0, cycle == 2 ? WT_OUTCOME_TIMEOUT : WT_OUTCOME_HTTP_5XX);
    CycleSample s;
    hot.Drain(&s);
    w.Push(std::move(s), 2);
  }
  WindowStats st = w.Compute();
  EXPECT_EQ(st.requests, 200u);  // cycles 1 and 2 only
  EXPECT_EQ(st.outcomes[WT_OUTCOME_HTTP_5XX], 10u);
  EXPECT_EQ(st.outcomes[WT_OUTCOME_TIMEOUT], 10u);
  EXPECT_DOUBLE_EQ(st.error_rate, 0.1);
  EXPECT_NEAR(st.mean_ms, 25.0, 1e-9) << "failures carry no service time";
  EXPECT_EQ(st.latency_samples, 180u);
  EXPECT_NEAR(st.p99_ms, 30.0, 30.0 * 0.02);
}

TEST(Window, FastFailuresDoNotMakeLatencyLookFast) {
  HotStats hot;
  for (int i = 0; i < 10; ++i) hot.Record(100.0, WT_OUTCOME_SUCCESS);
  for (int i = 0; i < 1000; ++i) hot.Record(1.0, WT_OUTCOME_CONNECT_ERROR);
  for (int i = 0; i < 1000; ++i) hot.Record(2.0, WT_OUTCOME_HTTP_5XX);
  CycleSample s;
  hot.Drain(&s);
  Window w;
  w.Push(std::move(s), 1);
  WindowStats st = w.Compute();
  EXPECT_NEAR(st.mean_ms, 100.0, 1e-9);
  EXPECT_NEAR(st.p95_ms, 100.0, 2.0);
  EXPECT_EQ(st.outcomes[WT_OUTCOME_CONNECT_ERROR], 1000u);
}

// Successes are counted as served answers minus business errors (one atomic fewer per report).
// With reporters and drains racing, a business error's count and its bucket may be taken by
// different drains: no sample may then go negative, and once all is drained the totals are exact.
TEST(HotStats, SuccessesDerivedFromServedAnswersAreExactOnceDrained) {
  HotStats hot;
  constexpr int kPerThread = 200000;
  std::atomic<bool> done{false};
  std::vector<CycleSample> samples;
  std::thread drainer([&] {
    while (!done.load()) {
      samples.emplace_back();
      hot.Drain(&samples.back());
    }
  });
  std::vector<std::thread> reporters;
  for (int t = 0; t < 2; ++t) {
    reporters.emplace_back([&hot, t] {
      for (int i = 0; i < kPerThread; ++i) {
        // Thread 0 sends business errors only, so a sample that gets one's count without its
        // bucket has no success of its own to absorb the difference.
        const int o = t == 0 ? WT_OUTCOME_BUSINESS_ERROR
                             : i % 7 == 0 ? WT_OUTCOME_HTTP_5XX : WT_OUTCOME_SUCCESS;
        hot.Record(1.0 + i % 50, o);
      }
    });
  }
  for (auto& r : reporters) r.join();
  done.store(true);
  drainer.join();
  samples.emplace_back();
  hot.Drain(&samples.back());

  uint64_t expect_business = 0, expect_5xx = 0, expect_success = 0;
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      if (t == 0) ++expect_business;
      else if (i % 7 == 0) ++expect_5xx;
      else ++expect_success;
    }
  }
  std::array<uint64_t, kOutcomes> got{};
  uint64_t served = 0;
  for (const CycleSample& s : samples) {
    for (int o = 0; o < kOutcomes; ++o) got[o] += s.outcomes[o];
    served += s.latency_count;
  }
  EXPECT_EQ(got[WT_OUTCOME_SUCCESS], expect_success);
  EXPECT_EQ(got[WT_OUTCOME_BUSINESS_ERROR], expect_business);
  EXPECT_EQ(got[WT_OUTCOME_HTTP_5XX], expect_5xx);
  EXPECT_EQ(served, expect_success + expect_business);
  EXPECT_EQ(hot.Lifetime(WT_OUTCOME_SUCCESS), expect_success);
  EXPECT_EQ(hot.Lifetime(WT_OUTCOME_BUSINESS_ERROR), expect_business);
}

TEST(HotStats, LifetimeCountsWhatIsNotDrainedYet) {
  HotStats hot;
  for (int i = 0; i < 5; ++i) hot.Record(10.0, WT_OUTCOME_SUCCESS);
  hot.Record(10.0, WT_OUTCOME_BUSINESS_ERROR);
  CycleSample s;
  hot.Drain(&s);
  for (int i = 0; i < 3; ++i) hot.Record(20.0, WT_OUTCOME_SUCCESS);
  hot.Record(20.0, WT_OUTCOME_BUSINESS_ERROR);
  hot.Record(1.0, WT_OUTCOME_TIMEOUT);
  EXPECT_EQ(hot.Lifetime(WT_OUTCOME_SUCCESS), 8u);
  EXPECT_EQ(hot.Lifetime(WT_OUTCOME_BUSINESS_ERROR), 2u);
  EXPECT_EQ(hot.Lifetime(WT_OUTCOME_TIMEOUT), 1u);
  EXPECT_EQ(s.outcomes[WT_OUTCOME_SUCCESS], 5u);
}

TEST(Window, ResourcesAreAveragedOverTheWindow) {
  Window w;
  for (double cpu : {0.5, 0.9, 1.0}) {
    HotStats hot;
    const double values[kResources] = {cpu, 0, 0, 0};
    hot.RecordResources(WT_RES_CPU, values);
    CycleSample s;
    hot.Drain(&s);
    w.Push(std::move(s), 2);
  }
  WindowStats st = w.Compute();
  EXPECT_TRUE(st.resource_known[0]);
  EXPECT_FALSE(st.resource_known[1]);
  EXPECT_NEAR(st.resources[0], 0.95, 1e-9);
}

}  // namespace
}  // namespace weighted
