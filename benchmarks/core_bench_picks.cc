// The hot path of the core suite (docs/performance.md): pick, report, pick + report at 3, 100,
// 1 000, 10 000 endpoints and 1, 2 (WT_BENCH_THREADS) threads, through the C API as a caller links
// it; beside them the peers in the same binary and run: nginx's smooth weighted round-robin behind
// a mutex and Envoy's EDF scheduler, and for the default (load-aware) mode a P2C peak-EWMA
// (Finagle, Linkerd) and Envoy's least-request (baselines.h).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include <benchmark/benchmark.h>

#include "baselines.h"
#include "core_bench_common.h"
#include "weighted/weighted.h"

namespace {

using namespace wtbench;

// ---- pick ----

void BM_Pick_Engine(benchmark::State& state) {
  Fleet& f = SharedFleet(int(state.range(0)));
  wt_pick p = WT_PICK_INIT;
  for (auto _ : state) {
    wt_service_pick(f.service, &p);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Pick_Swrr(benchmark::State& state) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<wtbench::SmoothWrr>> shared;  // one per n, all threads
  wtbench::SmoothWrr* s;
  {
    std::lock_guard lock(mu);
    auto& p = shared[int(state.range(0))];
    if (!p) p = std::make_unique<wtbench::SmoothWrr>(Weights(int(state.range(0))));
    s = p.get();
  }
  for (auto _ : state) benchmark::DoNotOptimize(s->Pick());
  state.SetItemsProcessed(state.iterations());
}

void BM_Pick_Edf(benchmark::State& state) {
  wtbench::EdfScheduler edf(Weights(int(state.range(0))));  // per thread, as Envoy's workers
  for (auto _ : state) benchmark::DoNotOptimize(edf.Pick());
  state.SetItemsProcessed(state.iterations());
}

// ---- report ----

void BM_Report_Engine(benchmark::State& state) {
  Fleet& f = SharedFleet(int(state.range(0)));
  const auto& lat = Latencies();
  uint64_t i = uint64_t(state.thread_index()) * 7919;
  Cursor at(i, f.keys.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        wt_service_report_key(f.service, f.keys[at.Next()], lat[i & (kLatencies - 1)], OutcomeOf(i)));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

std::mutex g_swrr_mu;
std::map<int, std::unique_ptr<wtbench::SmoothWrr>> g_swrr;
wtbench::SmoothWrr& SharedSwrr(int n) {
  std::lock_guard lock(g_swrr_mu);
  auto& p = g_swrr[n];
  if (!p) p = std::make_unique<wtbench::SmoothWrr>(Weights(n));
  return *p;
}

void BM_Report_Swrr(benchmark::State& state) {
  wtbench::SmoothWrr& s = SharedSwrr(int(state.range(0)));
  uint64_t i = uint64_t(state.thread_index()) * 7919;
  Cursor at(i, size_t(state.range(0)));
  for (auto _ : state) {
    s.Report(uint32_t(at.Next()), OutcomeOf(i) != WT_OUTCOME_SUCCESS);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

// ---- pick + report (a request's whole life through the engine) ----

void PickReportLoop(benchmark::State& state, bool load_aware) {
  Fleet& f = SharedFleet(int(state.range(0)), load_aware);
  const auto& lat = Latencies();
  uint64_t i = uint64_t(state.thread_index()) * 7919;
  wt_pick p = WT_PICK_INIT;
  for (auto _ : state) {
    wt_service_pick(f.service, &p);
    benchmark::DoNotOptimize(
        wt_service_complete(f.service, &p, lat[i & (kLatencies - 1)], OutcomeOf(i)));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_PickReport_Engine(benchmark::State& state) { PickReportLoop(state, false); }

// picker.mode load_aware: two candidates, in-flight counts (a shared write by design).
void BM_PickReport_EngineLoadAware(benchmark::State& state) { PickReportLoop(state, true); }

// The reference P2C peak-EWMA (baselines.h), shared by the threads, the engine's picker time
// constant (10 s). Time advances 1 us per request, so exp() sees varied arguments.
void BM_PickReport_P2cPeakEwma(benchmark::State& state) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<wtbench::P2cPeakEwma>> shared;
  wtbench::P2cPeakEwma* b;
  {
    std::lock_guard lock(mu);
    auto& p = shared[int(state.range(0))];
    if (!p) p = std::make_unique<wtbench::P2cPeakEwma>(size_t(state.range(0)), 10e9);
    b = p.get();
  }
  const auto& lat = Latencies();
  wtbench::Rng rng(0x9e3779b97f4a7c15ull * uint64_t(state.thread_index() + 1));
  uint64_t i = uint64_t(state.thread_index()) * 7919;
  for (auto _ : state) {
    const uint32_t h = b->Pick(rng);
    b->Report(h, lat[i & (kLatencies - 1)], int64_t(i) * 1000);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

// Envoy least-request: an EDF per worker thread over the hosts' shared active-request gauges.
void BM_PickReport_EnvoyLeastRequest(benchmark::State& state) {
  const int n = int(state.range(0));
  static std::mutex mu;
  static std::map<int, std::unique_ptr<wtbench::EnvoyLeastRequest::HostStats[]>> stats;
  wtbench::EnvoyLeastRequest::HostStats* st;
  {
    std::lock_guard lock(mu);
    auto& p = stats[n];
    if (!p) p.reset(new wtbench::EnvoyLeastRequest::HostStats[n]);
    st = p.get();
  }
  wtbench::EnvoyLeastRequest lr(Weights(n), st);
  uint64_t i = 0;
  for (auto _ : state) {
    lr.Report(lr.Pick(), OutcomeOf(i++) != WT_OUTCOME_SUCCESS);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_PickReport_Swrr(benchmark::State& state) {
  wtbench::SmoothWrr& s = SharedSwrr(int(state.range(0)));
  uint64_t i = uint64_t(state.thread_index()) * 7919;
  for (auto _ : state) {
    s.Report(s.Pick(), OutcomeOf(i) != WT_OUTCOME_SUCCESS);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

// Envoy: pick from the worker's own EDF, outcome into the host's atomic stats counters.
void BM_PickReport_Edf(benchmark::State& state) {
  const int n = int(state.range(0));
  wtbench::EdfScheduler edf(Weights(n));
  static std::mutex mu;
  static std::map<int, std::unique_ptr<std::atomic<uint64_t>[]>> counters;
  std::atomic<uint64_t>* c;
  {
    std::lock_guard lock(mu);
    auto& p = counters[n];
    if (!p) p.reset(new std::atomic<uint64_t>[2 * n]());
    c = p.get();
  }
  uint64_t i = 0;
  for (auto _ : state) {
    const uint32_t h = edf.Pick();
    c[2 * h + (OutcomeOf(i++) != WT_OUTCOME_SUCCESS)].fetch_add(1, std::memory_order_relaxed);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_Pick_Engine)->Apply(Sizes);
BENCHMARK(BM_Pick_Swrr)->Apply(Sizes);
BENCHMARK(BM_Pick_Edf)->Apply(Sizes);
BENCHMARK(BM_Report_Engine)->Apply(Sizes);
BENCHMARK(BM_Report_Swrr)->Apply(Sizes);
BENCHMARK(BM_PickReport_Engine)->Apply(Sizes);
BENCHMARK(BM_PickReport_EngineLoadAware)->Apply(Sizes);
BENCHMARK(BM_PickReport_P2cPeakEwma)->Apply(Sizes);
BENCHMARK(BM_PickReport_EnvoyLeastRequest)->Apply(Sizes);
BENCHMARK(BM_PickReport_Swrr)->Apply(Sizes);
BENCHMARK(BM_PickReport_Edf)->Apply(Sizes);
