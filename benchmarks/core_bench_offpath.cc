// The core suite's off-path costs (docs/performance.md): one controller cycle at 10 000
// endpoints, snapshot JSON and Prometheus exposition of populated fleets, one endpoint's snapshot,
// and the heap per endpoint.
#include <malloc.h>
#include <time.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <benchmark/benchmark.h>

#include "core_bench_common.h"
#include "weighted/weighted.h"

namespace {

using namespace wtbench;

// ---- one controller cycle ----

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// wt_engine_run_cycle on a service of n endpoints that each received `range(1)` reports since
// the last cycle (a healthy fleet; 1% 5xx). Only the cycle is timed.
void BM_Cycle_Engine(benchmark::State& state) {
  Fleet f(int(state.range(0)));
  const int per_endpoint = int(state.range(1));
  uint64_t seq = 0;
  for (int warm = 0; warm < 3; ++warm) {  // fill the window
    f.Traffic(per_endpoint, &seq);
    Check(wt_engine_run_cycle(f.engine), "cycle");
  }
  double cpu_s = 0;
  for (auto _ : state) {
    f.Traffic(per_endpoint, &seq);
    const double c0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    Check(wt_engine_run_cycle(f.engine), "cycle");
    const auto t1 = std::chrono::steady_clock::now();
    cpu_s += ThreadCpuSeconds() - c0;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    wt_event ev = WT_EVENT_INIT;
    int has = 1;
    while (has) Check(wt_engine_poll_event(f.engine, &ev, &has), "poll");
  }
  // The cycle's own CPU time (this thread), in ms: on a shared machine the wall time also counts
  // the time other processes held the core.
  state.counters["cpu_ms"] = cpu_s * 1e3 / double(state.iterations());
}

// ---- observability ----

Fleet& PopulatedFleet(int n) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<Fleet>> fleets;
  std::lock_guard lock(mu);
  auto& f = fleets[n];
  if (!f) {
    f = std::make_unique<Fleet>(n, n > 65536 ? kLargeConfig : kWeightedConfig);
    uint64_t seq = 0;
    for (int c = 0; c < 2; ++c) {
      f->Traffic(20, &seq);
      Check(wt_engine_run_cycle(f->engine), "cycle");
    }
  }
  return *f;
}

// One export (snapshot JSON or Prometheus text) of a populated fleet per iteration.
void ExportLoop(benchmark::State& state, wt_status (*export_fn)(wt_engine*, char**, size_t*),
                const char* what) {
  Fleet& f = PopulatedFleet(int(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    char* out = nullptr;
    Check(export_fn(f.engine, &out, &bytes), what);
    wt_free(out);
  }
  state.counters["bytes"] = double(bytes);
  state.counters["ns_per_endpoint"] = benchmark::Counter(
      double(state.iterations()) * double(state.range(0)),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_SnapshotJson(benchmark::State& state) {
  ExportLoop(state, wt_engine_snapshot_json, "snapshot_json");
}

void BM_Prometheus(benchmark::State& state) { ExportLoop(state, wt_engine_prometheus, "prometheus"); }

// One endpoint's part of the snapshot (wt_service_snapshot_json), in a fleet of range(0).
void BM_SnapshotJsonEndpoint(benchmark::State& state) {
  Fleet& f = PopulatedFleet(int(state.range(0)));
  const std::string id = "10.0.0.7:8080";
  size_t bytes = 0;
  for (auto _ : state) {
    char* out = nullptr;
    Check(wt_service_snapshot_json(f.service, id.c_str(), &out, &bytes), "service snapshot");
    wt_free(out);
  }
  state.counters["bytes"] = double(bytes);
}

// ---- memory per endpoint ----

size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small-block bytes in use + mmapped blocks
}

// Heap bytes per endpoint, measured with mallinfo2 on this thread's (the main) arena: the engine
// with its n endpoints right after set_endpoints ("idle"), and in steady state after `range(1)`
// reports per endpoint per cycle over enough cycles to fill the window ("steady", the figure the
// 2 KiB target reads). Everything the engine holds counts: endpoints, recorders, windows,
// snapshot, membership maps, ids.
void BM_Memory(benchmark::State& state) {
  const int n = int(state.range(0));
  const int per_endpoint = int(state.range(1));
  double idle = 0, steady = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const size_t before = HeapInUse();
    {
      Fleet f(n);
      const size_t after_set = HeapInUse();
      uint64_t seq = 0;
      for (int c = 0; c < 4; ++c) {
        f.Traffic(per_endpoint, &seq);
        Check(wt_engine_run_cycle(f.engine), "cycle");
      }
      wt_event ev = WT_EVENT_INIT;
      int has = 1;
      while (has) Check(wt_engine_poll_event(f.engine, &ev, &has), "poll");
      const size_t after_traffic = HeapInUse();
      // The benchmark's own key vector is not engine state.
      const double own = double(f.keys.capacity() * sizeof(uint64_t));
      idle = (double(after_set - before) - own) / n;
      steady = (double(after_traffic - before) - own) / n;
    }
  }
  state.counters["bytes_per_endpoint_idle"] = idle;
  state.counters["bytes_per_endpoint"] = steady;
}

}  // namespace

BENCHMARK(BM_Cycle_Engine)
    ->Args({10000, 0})->Args({10000, 20})->Args({10000, 200})
    ->ArgNames({"endpoints", "reports"})->UseManualTime()->Unit(benchmark::kMillisecond)
    ->Iterations(10);  // fixed: the untimed traffic between cycles costs far more than the cycle
BENCHMARK(BM_SnapshotJson)->Arg(100)->Arg(10000)->Arg(100000)->ArgName("endpoints")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SnapshotJsonEndpoint)->Arg(100000)->ArgName("endpoints")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Prometheus)->Arg(100)->Arg(10000)->ArgName("endpoints")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memory)
    ->Args({1000, 20})->Args({10000, 20})->Args({10000, 200})
    ->ArgNames({"endpoints", "reports"})->Iterations(1)->Unit(benchmark::kMillisecond);
