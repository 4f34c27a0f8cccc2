// The backend model and the fault types, one at a time.
#include <gtest/gtest.h>

#include "weighted_sim/backend.h"

namespace weighted_sim {
namespace {

BackendSpec Spec(int workers, int queue) {
  BackendSpec s;
  s.id = "b";
  s.workers = workers;
  s.queue_limit = queue;
  s.service = {"constant", 10, 0};
  return s;
}

FaultSpec Fault(FaultType t, double start, std::optional<double> end) {
  FaultSpec f;
  f.type = t;
  f.backend = 0;
  f.start_s = start;
  f.end_s = end;
  return f;
}

TEST(Backend, FullQueueAnswers503AtOnce) {
  std::vector<FaultSpec> none;
  Backend b(Spec(2, 3), 0, &none, 1);
  for (uint64_t r = 0; r < 2; ++r) EXPECT_EQ(b.Arrive(r, 0).admit, Backend::Admit::kStarted);
  for (uint64_t r = 2; r < 5; ++r) EXPECT_EQ(b.Arrive(r, 0).admit, Backend::Admit::kQueued);
  const Backend::Arrival over = b.Arrive(5, 0);
  EXPECT_EQ(over.admit, Backend::Admit::kRejected);
  EXPECT_EQ(over.answer_ns, 0);  // reject_ms defaults to 0: "at once"
  EXPECT_EQ(b.outstanding(), 5);
  // A finish frees a worker and starts the head of the queue, FIFO.
  const auto next = b.Finish(10 * kNsPerMs);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->request, 2u);
  EXPECT_EQ(next->done_ns, 20 * kNsPerMs);
  EXPECT_EQ(b.Arrive(6, 10 * kNsPerMs).admit, Backend::Admit::kQueued);
}

TEST(Backend, CpuIsTheBusyShareOfWorkers) {
  std::vector<FaultSpec> none;
  Backend b(Spec(4, 0), 0, &none, 1);
  b.Arrive(0, 0);                    // one of four workers busy for 10 ms
  b.Finish(10 * kNsPerMs);
  b.Arrive(1, 20 * kNsPerMs);        // and another one from 20 ms to 30 ms
  b.Finish(30 * kNsPerMs);
  const BackendReport r = b.Report(40 * kNsPerMs);
  EXPECT_NEAR(r.cpu, 20.0 / (4 * 40.0), 1e-9);
  EXPECT_NEAR(r.qps, 2 / 0.04, 1e-9);
  EXPECT_EQ(r.eps, 0);
  EXPECT_NEAR(b.Report(80 * kNsPerMs).cpu, 0.0, 1e-12);  // the interval was reset
}

TEST(Faults, GcMultipliesServiceTimeAndAddsCpu) {
  std::vector<FaultSpec> f = {Fault(FaultType::kGc, 1, 2)};
  f[0].service_multiplier = 5;
  f[0].cpu_extra = 0.3;
  Backend b(Spec(1, 0), 0, &f, 1);
  EXPECT_EQ(b.Arrive(0, 0).started.done_ns, 10 * kNsPerMs);
  b.Finish(10 * kNsPerMs);
  EXPECT_EQ(b.Arrive(1, kNsPerS).started.done_ns, kNsPerS + 50 * kNsPerMs);
  EXPECT_NEAR(b.Report(kNsPerS + 50 * kNsPerMs).cpu, 0.3 + 0.060 / 1.05, 1e-9);  // 10 + 50 ms busy
  EXPECT_DOUBLE_EQ(b.ServiceMeanMs(3 * kNsPerS), 10);  // over at 2 s
}

TEST(Faults, LeakRampsErrorsAndMemory) {
  std::vector<FaultSpec> f = {Fault(FaultType::kLeak, 10, std::nullopt)};
  f[0].ramp_s = 5;
  f[0].error_rate = 0.15;
  f[0].memory = 0.95;
  const Effects before = EffectsAt(f, 0, 0.4, 9.9);
  const Effects half = EffectsAt(f, 0, 0.4, 12.5);
  const Effects full = EffectsAt(f, 0, 0.4, 60);
  EXPECT_EQ(before.error_rate, 0);
  EXPECT_NEAR(half.error_rate, 0.075, 1e-12);
  EXPECT_NEAR(full.error_rate, 0.15, 1e-12);
  EXPECT_NEAR(before.memory, 0.4, 1e-12);
  EXPECT_NEAR(half.memory, 0.675, 1e-12);
  EXPECT_NEAR(full.memory, 0.95, 1e-12);
  // Errors come after the normal service time, from a worker.
  Backend b(Spec(100, 0), 0, &f, 1);
  int errors = 0;
  for (uint64_t r = 0; r < 100; ++r) {
    const Backend::Arrival a = b.Arrive(r, 60 * kNsPerS);
    ASSERT_EQ(a.admit, Backend::Admit::kStarted);
    EXPECT_EQ(a.started.done_ns, 60 * kNsPerS + 10 * kNsPerMs);
    errors += a.started.error ? 1 : 0;
  }
  EXPECT_GT(errors, 5);
  EXPECT_LT(errors, 30);
}

TEST(Faults, HardDownRefusesInOneMillisecond) {
  std::vector<FaultSpec> f = {Fault(FaultType::kDown, 1, 2)};
  Backend b(Spec(1, 0), 0, &f, 1);
  const Backend::Arrival a = b.Arrive(0, kNsPerS);
  EXPECT_EQ(a.admit, Backend::Admit::kRefused);
  EXPECT_EQ(a.answer_ns, kNsPerS + kNsPerMs);
  EXPECT_EQ(b.busy(), 0);
  EXPECT_EQ(b.Arrive(1, 2 * kNsPerS).admit, Backend::Admit::kStarted);
  EXPECT_EQ(b.ErrorRate(kNsPerS), 1.0);
}

TEST(Faults, FlapAlternatesDownAndUp) {
  std::vector<FaultSpec> f = {Fault(FaultType::kFlap, 10, 40)};
  f[0].period_s = 10;
  f[0].down_s = 3;
  EXPECT_TRUE(EffectsAt(f, 0, 0, 11).down);
  EXPECT_FALSE(EffectsAt(f, 0, 0, 14).down);
  EXPECT_TRUE(EffectsAt(f, 0, 0, 14).sick);  // up phases of a flapping backend are still sick
  EXPECT_TRUE(EffectsAt(f, 0, 0, 22).down);
  EXPECT_FALSE(EffectsAt(f, 0, 0, 41).down);
  EXPECT_FALSE(EffectsAt(f, 0, 0, 41).sick);
}

TEST(Faults, SlowRecoveryFadesLinearly) {
  std::vector<FaultSpec> f = {Fault(FaultType::kSlowRecovery, 10, 20)};
  f[0].service_multiplier = 5;
  f[0].recovery_s = 10;
  EXPECT_NEAR(EffectsAt(f, 0, 0, 15).service_multiplier, 5, 1e-12);
  EXPECT_NEAR(EffectsAt(f, 0, 0, 25).service_multiplier, 3, 1e-12);  // halfway: 1 + 4 x 0.5
  EXPECT_NEAR(EffectsAt(f, 0, 0, 30).service_multiplier, 1, 1e-12);
}

TEST(Faults, CpuHogAddsCpuAndContention) {
  std::vector<FaultSpec> f = {Fault(FaultType::kCpuHog, 0, 10)};
  f[0].cpu_extra = 0.5;
  f[0].service_multiplier = 1.5;
  const Effects e = EffectsAt(f, 0, 0, 5);
  EXPECT_NEAR(e.cpu_extra, 0.5, 1e-12);
  EXPECT_NEAR(e.service_multiplier, 1.5, 1e-12);
  EXPECT_EQ(EffectsAt(f, 1, 0, 5).cpu_extra, 0);  // another backend is untouched
}

TEST(Faults, FastFailAnswersWithoutAWorker) {
  std::vector<FaultSpec> f = {Fault(FaultType::kFastFail, 0, std::nullopt)};
  f[0].error_rate = 1.0;
  f[0].error_latency_ms = 1;
  Backend b(Spec(1, 0), 0, &f, 1);
  for (uint64_t r = 0; r < 10; ++r) {
    const Backend::Arrival a = b.Arrive(r, 0);
    EXPECT_EQ(a.admit, Backend::Admit::kFastFailed);
    EXPECT_EQ(a.answer_ns, kNsPerMs);
  }
  EXPECT_EQ(b.busy(), 0);
  EXPECT_NEAR(b.Report(kNsPerS).eps, 10, 1e-9);
}

TEST(Faults, StallHoldsWorkStartedInThePauseUntilItEnds) {
  std::vector<FaultSpec> f = {Fault(FaultType::kStall, 1, 2)};
  Backend b(Spec(3, 4), 0, &f, 1);
  // Before the pause: the constant 10 ms service.
  EXPECT_EQ(b.Arrive(0, kNsPerS / 2).started.done_ns, kNsPerS / 2 + 10 * kNsPerMs);
  // 0.25 s into it: finishes its 10 ms after the pause, 0.75 s later.
  const Backend::Arrival a = b.Arrive(1, kNsPerS + kNsPerS / 4);
  EXPECT_EQ(a.admit, Backend::Admit::kStarted);
  EXPECT_EQ(a.started.done_ns, 2 * kNsPerS + 10 * kNsPerMs);
  EXPECT_NEAR(b.ServiceMeanMs(kNsPerS + kNsPerS / 4), 760, 1e-6);  // what the oracle expects
  EXPECT_TRUE(EffectsAt(f, 0, 0, 1.5).sick);
  EXPECT_EQ(b.ErrorRate(kNsPerS + kNsPerS / 4), 0.0);  // a pause fails nothing by itself
  EXPECT_EQ(b.Arrive(2, 2 * kNsPerS).started.done_ns, 2 * kNsPerS + 10 * kNsPerMs);
}

}  // namespace
}  // namespace weighted_sim
