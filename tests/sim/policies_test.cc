// Each peer policy as a whole, driven through the Policy interface the simulator uses.
#include <gtest/gtest.h>

#include "weighted_sim/policy.h"
#include "weighted_sim/scenario.h"

namespace weighted_sim {
namespace {

PolicyEnv Env(size_t n, std::vector<double> weights = {}) {
  PolicyEnv env;
  for (size_t i = 0; i < n; ++i) env.ids.push_back("b" + std::to_string(i));
  env.weights = weights.empty() ? std::vector<double>(n, 1.0) : weights;
  env.seed = 3;
  return env;
}

Completion Done(int backend, double ms, Outcome o = Outcome::kSuccess,
                const BackendReport* trailer = nullptr) {
  Completion c;
  c.backend = backend;
  c.pick.backend = backend;
  c.latency_ms = ms;
  c.outcome = o;
  c.trailer = trailer;
  return c;
}

std::vector<int> Count(Policy& p, int n, int picks, int64_t now = 0) {
  std::vector<int> c(n, 0);
  for (int i = 0; i < picks; ++i) {
    const Pick k = p.PickBackend(now);
    ++c[k.backend];
    p.OnComplete(Done(k.backend, 10), now);
  }
  return c;
}

TEST(Policies, RoundRobinCyclesEvenly) {
  auto p = MakePolicy("round_robin", Env(3));
  const int first = p->PickBackend(0).backend;
  EXPECT_EQ(p->PickBackend(0).backend, (first + 1) % 3);
  EXPECT_EQ(p->PickBackend(0).backend, (first + 2) % 3);
}

TEST(Policies, FixedWeightsFollowDiscoveryWeights) {
  auto p = MakePolicy("fixed_weights", Env(3, {1, 2, 3}));
  const std::vector<int> c = Count(*p, 3, 600);
  EXPECT_EQ(c, (std::vector<int>{100, 200, 300}));  // exact over whole cycles
}

TEST(Policies, LeastRequestPrefersFewerActive) {
  auto p = MakePolicy("least_request", Env(2));
  // Keep 5 requests open on whichever backend gets them first, then count new picks.
  std::vector<int> open(2, 0);
  for (int i = 0; i < 5; ++i) ++open[p->PickBackend(0).backend];
  const int busy = open[0] > open[1] ? 0 : 1;
  int to_busy = 0;
  for (int i = 0; i < 100; ++i) {
    const Pick k = p->PickBackend(0);
    to_busy += k.backend == busy ? 1 : 0;
    p->OnComplete(Done(k.backend, 1), 0);
  }
  // With replacement, both samples land on the busy one a quarter of the time at most.
  EXPECT_LT(to_busy, 40);
}

TEST(Policies, PeakEwmaAvoidsTheSlowBackend) {
  auto p = MakePolicy("peak_ewma", Env(2));
  int64_t now = 0;
  std::vector<int> c(2, 0);
  for (int i = 0; i < 2000; ++i) {
    now += 1'000'000;
    p->AdvanceTo(now);
    const Pick k = p->PickBackend(now);
    ++c[k.backend];
    p->OnComplete(Done(k.backend, k.backend == 0 ? 100 : 10), now);
  }
  EXPECT_GT(c[1], 3 * c[0]);
}

TEST(Policies, GrpcWrrIsRoundRobinDuringBlackoutThenWeighted) {
  auto p = MakePolicy("grpc_wrr", Env(2));
  const BackendReport heavy{0.8, 0, 100, 0};  // cpu 0.8 -> weight 125
  const BackendReport light{0.2, 0, 100, 0};  // cpu 0.2 -> weight 500
  auto drive = [&](int64_t from_s, int64_t to_s) {
    std::vector<int> c(2, 0);
    for (int64_t t = from_s * kNsPerS; t < to_s * kNsPerS; t += 10'000'000) {
      p->AdvanceTo(t);
      const Pick k = p->PickBackend(t);
      ++c[k.backend];
      p->OnComplete(Done(k.backend, 10, Outcome::kSuccess, k.backend == 0 ? &heavy : &light), t);
    }
    return c;
  };
  const std::vector<int> blackout = drive(0, 9);
  EXPECT_NEAR(blackout[0], blackout[1], 2);
  drive(9, 12);
  const std::vector<int> weighted = drive(12, 20);
  EXPECT_NEAR(static_cast<double>(weighted[1]) / weighted[0], 4.0, 0.3);
}

TEST(Policies, GrpcWrrPenalisesErrors) {
  auto p = MakePolicy("grpc_wrr", Env(2));
  const BackendReport ok{0.5, 0, 100, 0};     // 100 / 0.5 = 200
  const BackendReport bad{0.5, 50, 100, 50};  // 100 / (0.5 + 0.5) = 100
  std::vector<int> c(2, 0);
  for (int64_t t = 0; t < 30 * kNsPerS; t += 10'000'000) {
    p->AdvanceTo(t);
    const Pick k = p->PickBackend(t);
    if (t >= 15 * kNsPerS) ++c[k.backend];
    p->OnComplete(Done(k.backend, 10, Outcome::kSuccess, k.backend == 0 ? &ok : &bad), t);
  }
  EXPECT_NEAR(static_cast<double>(c[0]) / c[1], 2.0, 0.15);
}

// Envoy: five consecutive 5xx on backend 0 of three.
std::vector<int> EnvoyAfterFailures(const char* policy, int64_t check_at_s) {
  auto p = MakePolicy(policy, Env(3));
  for (int i = 0; i < 5; ++i) p->OnComplete(Done(0, 1, Outcome::kHttp5xx), kNsPerS);
  p->AdvanceTo(check_at_s * kNsPerS);
  return Count(*p, 3, 300, check_at_s * kNsPerS);
}

TEST(Policies, StockEnvoyEjectsNothingAmongThreeHosts) {
  EXPECT_EQ(EnvoyAfterFailures("envoy_outlier", 2)[0], 100);
}

TEST(Policies, EnvoyAlwaysEjectOneHostEjectsUntilAnIntervalAfterThirtySeconds) {
  EXPECT_EQ(EnvoyAfterFailures("envoy_outlier_eject_one", 2)[0], 0);
  // Ejected at 1 s for 30 s; the check runs on the 10 s interval: still out at 35 s ...
  EXPECT_EQ(EnvoyAfterFailures("envoy_outlier_eject_one", 35)[0], 0);
  // ... back at the 40 s sweep.
  EXPECT_EQ(EnvoyAfterFailures("envoy_outlier_eject_one", 41)[0], 100);
}

TEST(Policies, EnvoyCountsTimeoutsAndConnectErrorsAs5xxAndResetsOnSuccess) {
  auto p = MakePolicy("envoy_outlier_eject_one", Env(3));
  for (int i = 0; i < 4; ++i) p->OnComplete(Done(0, 1000, Outcome::kTimeout), 0);
  p->OnComplete(Done(0, 1), 0);  // a success in between resets the run
  for (int i = 0; i < 4; ++i) p->OnComplete(Done(0, 1, Outcome::kConnectError), 0);
  EXPECT_GT(p->Weights()[0], 0);  // four in a row: still in
  p->OnComplete(Done(0, 1, Outcome::kConnectError), 0);  // the fifth in a row
  EXPECT_EQ(p->Weights()[0], 0);
  EXPECT_EQ(Count(*p, 3, 300)[0], 0);
}

class FakeTruth final : public Truth {
 public:
  std::vector<double> mean_ms, error;
  std::vector<int> outstanding;
  double ServiceMeanMs(int b, int64_t) const override { return mean_ms[b]; }
  double ErrorRate(int b, int64_t) const override { return error[b]; }
  int Outstanding(int b) const override { return outstanding[b]; }
  int Workers(int) const override { return 8; }
  int QueueLimit(int) const override { return 128; }
};

TEST(Policies, OracleTakesLeastExpectedDelayAmongHealthyBackends) {
  FakeTruth t;
  t.mean_ms = {20, 100, 20};
  t.error = {0, 0, 0.15};
  t.outstanding = {0, 0, 0};
  PolicyEnv env = Env(3);
  env.truth = &t;
  auto p = MakePolicy("oracle", env);
  EXPECT_EQ(p->PickBackend(0).backend, 0);  // b2 is fast but erring, b1 slow
  t.outstanding = {40, 0, 0};                // b0's queue: 20 + 33 x 2.5 = 102.5 ms > 100
  EXPECT_EQ(p->PickBackend(0).backend, 1);
  t.error = {1, 1, 0.15};                    // nothing under 1%: the one that still answers
  EXPECT_EQ(p->PickBackend(0).backend, 2);
}

TEST(Policies, UnknownPolicyIsRejectedWithTheKnownNames) {
  try {
    MakePolicy("bogus", Env(2));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("round_robin"), std::string::npos);
  }
}

}  // namespace
}  // namespace weighted_sim
