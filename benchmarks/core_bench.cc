// Google Benchmark suite for the core, through the C API exactly as a caller links it
// (libweighted.so). Measured: pick, report, pick+report at 3, 100, 1 000, 10 000
// endpoints, 1 and 2 threads; one controller cycle at 10 000 endpoints; snapshot JSON and
// Prometheus exposition; memory per endpoint. Baselines in the same binary and run: nginx's smooth
// weighted round-robin behind a mutex and Envoy's EDF scheduler, and for the default
// (load-aware) mode a P2C peak-EWMA (Finagle, Linkerd) and Envoy's least-request (baselines.h).
// At the end it prints engine / baseline ratios, thread scaling and the performance targets
// (docs/performance.md) from this same run. WT_BENCH_THREADS=1,2,4,8 sets the thread counts.
//
// Run: build/release/benchmarks/weighted_core_bench [--benchmark_repetitions=5 ...]
// `make bench` runs it with repetitions and JSON output; benchmarks/report.py reads that.
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "baselines.h"
#include "weighted/weighted.h"

namespace {

constexpr int kLatencies = 4096;  // power of two

void Check(wt_status s, const char* what) {
  if (s != WT_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", what, wt_status_name(s), wt_last_error());
    std::abort();
  }
}

// Base weights 1..10, as discovery metadata would give them.
int BaseWeight(int i) { return 1 + (i * 7) % 10; }

// Latencies of a healthy fleet: lognormal, median 20 ms, sigma 0.3; 1% 5xx.
const std::vector<double>& Latencies() {
  static const std::vector<double> v = [] {
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> d(std::log(20.0), 0.3);
    std::vector<double> out(kLatencies);
    for (double& x : out) x = d(rng);
    return out;
  }();
  return v;
}
int OutcomeOf(uint64_t i) { return i % 100 == 99 ? WT_OUTCOME_HTTP_5XX : WT_OUTCOME_SUCCESS; }

// Walks the endpoints round and round without a division: a 64-bit `%` by a runtime n is
// ~10 ns here, a third of what a report costs, and the same loop drives engine and baseline.
struct Cursor {
  Cursor(uint64_t start, size_t count) : n(count), i(start % count) {}
  size_t Next() {
    const size_t r = i;
    if (++i == n) i = 0;
    return r;
  }
  size_t n, i;
};

constexpr const char* kWeightedConfig = R"({"seed": 1, "picker": {"mode": "weighted"}})";
constexpr const char* kLoadAwareConfig = R"({"seed": 1, "picker": {"mode": "load_aware"}})";
// 100 000 endpoints in one service, above the default limit of 65 536.
constexpr const char* kLargeConfig =
    R"({"seed": 1, "picker": {"mode": "weighted"}, "limits": {"max_endpoints_per_service": 200000}})";

// One engine (manual clock: no controller thread competes with the measurement) with one
// service of n endpoints.
struct Fleet {
  wt_engine* engine = nullptr;
  wt_service* service = nullptr;
  std::vector<uint64_t> keys;

  // picker.mode is pinned: the pick targets are about the weighted (alias) pick, whatever the
  // default; load_aware has its own benchmark.
  explicit Fleet(int n, const char* config = kWeightedConfig) {
    Check(wt_engine_create(config, std::strlen(config), WT_CLOCK_MANUAL, &engine), "create");
    Check(wt_engine_service(engine, "bench", &service), "service");
    std::vector<std::string> ids(n);
    std::vector<wt_endpoint_spec> specs(n, wt_endpoint_spec WT_ENDPOINT_SPEC_INIT);
    for (int i = 0; i < n; ++i) {
      ids[i] = "10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
               std::to_string(i & 255) + ":8080";
      specs[i].id = ids[i].c_str();
      specs[i].base_weight = double(BaseWeight(i));
    }
    keys.resize(n);
    Check(wt_service_set_endpoints(service, specs.data(), specs.size(), nullptr, keys.data(),
                                   nullptr),
          "set_endpoints");
  }
  ~Fleet() { wt_engine_destroy(engine); }
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // `per_endpoint` reports on every endpoint, then one controller cycle (advance one interval).
  void Traffic(int per_endpoint, uint64_t* seq) {
    const auto& lat = Latencies();
    for (int r = 0; r < per_endpoint; ++r) {
      for (uint64_t k : keys) {
        const uint64_t i = (*seq)++;
        Check(wt_service_report_key(service, k, lat[i & (kLatencies - 1)], OutcomeOf(i)), "report");
      }
    }
  }
};

// Fleets shared by every benchmark (and both threads of a threaded one), built once, untimed.
Fleet& SharedFleet(int n, bool load_aware = false) {
  static std::mutex mu;
  static std::map<std::pair<int, bool>, std::unique_ptr<Fleet>> fleets;
  std::lock_guard lock(mu);
  auto& f = fleets[{n, load_aware}];
  if (!f) {
    f = std::make_unique<Fleet>(n, load_aware ? kLoadAwareConfig : kWeightedConfig);
  }
  return *f;
}

std::vector<int> Weights(int n) {
  std::vector<int> w(n);
  for (int i = 0; i < n; ++i) w[i] = BaseWeight(i);
  return w;
}

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

const std::vector<int64_t> kSizes = {3, 100, 1000, 10000};

// Thread counts of the hot-path benchmarks: 1 and 2 on this 2-core machine; WT_BENCH_THREADS
// (say "1,2,4,8,16") measures the scaling on a larger one (docs/performance.md, "Thread scaling").
std::vector<int> ThreadCounts() {
  std::vector<int> out;
  if (const char* env = std::getenv("WT_BENCH_THREADS")) {
    for (const char* p = env; *p;) {
      char* end;
      const long t = std::strtol(p, &end, 10);
      if (end == p) break;
      if (t > 0) out.push_back(int(t));
      p = *end ? end + 1 : end;
    }
  }
  if (out.empty()) out = {1, 2};
  return out;
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : kSizes) b->Arg(n);
  b->ArgName("endpoints")->UseRealTime();
  for (int t : ThreadCounts()) b->Threads(t);
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

// ---- same-run ratios ----

namespace {

// Keeps every run (the console reporter still prints them) so main() can print ratios.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      // With repetitions, the median aggregate; without, the single run.
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      auto& slot = runs_[r.run_name.str()];
      if (r.run_type == Run::RT_Aggregate || !slot.is_agg) {
        slot.ns = r.GetAdjustedRealTime();
        slot.cpu_ns = r.GetAdjustedCPUTime();
        auto it = r.counters.find("items_per_second");
        slot.rate = it == r.counters.end() ? 0 : double(it->second);
        slot.is_agg = r.run_type == Run::RT_Aggregate;
        for (auto& [k, v] : r.counters) slot.counters[k] = double(v);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  struct Result {
    double ns = 0, cpu_ns = 0, rate = 0;
    bool is_agg = false;
    std::map<std::string, double> counters;
  };
  const Result* Get(const std::string& name) const {
    auto it = runs_.find(name);
    return it == runs_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Result> runs_;
};

std::string Name(const char* bm, int64_t n, int threads) {
  return std::string(bm) + "/endpoints:" + std::to_string(n) +
         "/real_time/threads:" + std::to_string(threads);
}

void Verdict(const char* what, double value, double bar, bool at_most, const char* unit) {
  const bool met = at_most ? value <= bar : value >= bar;
  std::printf("  %-44s %10.2f %-4s (target %s %g: %s)\n", what, value, unit, at_most ? "<=" : ">=",
              bar, met ? "met" : "MISSED");
}

void PrintSummary(const Collector& c) {
  std::printf("\n== weighted core: engine / baseline, same run (< 1 means the engine is faster) ==\n");
  std::printf("%-14s %9s %7s %12s %12s %12s %9s %9s\n", "operation", "endpoints", "threads",
              "engine ns", "swrr ns", "edf ns", "/swrr", "/edf");
  const struct {
    const char* op;
    const char* engine;
    const char* swrr;
    const char* edf;
  } rows[] = {{"pick", "BM_Pick_Engine", "BM_Pick_Swrr", "BM_Pick_Edf"},
              {"report", "BM_Report_Engine", "BM_Report_Swrr", nullptr},
              {"pick+report", "BM_PickReport_Engine", "BM_PickReport_Swrr", "BM_PickReport_Edf"}};
  for (const auto& row : rows) {
    for (int threads : {1, 2}) {
      for (int64_t n : kSizes) {
        const auto* e = c.Get(Name(row.engine, n, threads));
        if (!e) continue;
        const auto* s = c.Get(Name(row.swrr, n, threads));
        const auto* d = row.edf ? c.Get(Name(row.edf, n, threads)) : nullptr;
        std::printf("%-14s %9lld %7d %12.1f %12.1f %12.1f %9.3f %9.3f\n", row.op, (long long)n,
                    threads, e->ns, s ? s->ns : NAN, d ? d->ns : NAN, s ? e->ns / s->ns : NAN,
                    d ? e->ns / d->ns : NAN);
      }
    }
  }
  std::printf("(2-thread ns are wall time / all picks of both threads: the inverse of throughput)\n");

  std::printf("\n== default (load-aware) pick + report against the load-aware references, same run ==\n");
  std::printf("%-9s %7s %12s %12s %12s %9s %9s\n", "endpoints", "threads", "engine ns", "p2c-ewma ns",
              "envoy-lr ns", "/p2c", "/envoy-lr");
  for (int threads : ThreadCounts()) {
    for (int64_t n : kSizes) {
      const auto* e = c.Get(Name("BM_PickReport_EngineLoadAware", n, threads));
      const auto* p = c.Get(Name("BM_PickReport_P2cPeakEwma", n, threads));
      const auto* l = c.Get(Name("BM_PickReport_EnvoyLeastRequest", n, threads));
      if (!e) continue;
      std::printf("%9lld %7d %12.1f %12.1f %12.1f %9.3f %9.3f\n", (long long)n, threads, e->ns,
                  p ? p->ns : NAN, l ? l->ns : NAN, p ? e->ns / p->ns : NAN, l ? e->ns / l->ns : NAN);
    }
  }
  std::printf("\n== thread scaling: items/s with T threads / items/s with 1 (same run) ==\n");
  for (const char* bm : {"BM_PickReport_EngineLoadAware", "BM_PickReport_Engine",
                         "BM_PickReport_P2cPeakEwma", "BM_PickReport_EnvoyLeastRequest",
                         "BM_PickReport_Edf"}) {
    for (int64_t n : kSizes) {
      const auto* one = c.Get(Name(bm, n, 1));
      if (!one || one->rate <= 0) continue;
      std::printf("  %-34s %6lld endpoints:", bm, (long long)n);
      for (int threads : ThreadCounts()) {
        if (const auto* t = c.Get(Name(bm, n, threads))) std::printf("  %dT %.2fx", threads, t->rate / one->rate);
      }
      std::printf("\n");
    }
  }

  std::printf("\n== performance targets (this run) ==\n");
  if (auto* p = c.Get(Name("BM_Pick_Engine", 1000, 1))) Verdict("pick, 1000 endpoints", p->ns, 25, true, "ns");
  if (auto* p = c.Get(Name("BM_Pick_Engine", 10000, 1))) Verdict("pick, 10000 endpoints", p->ns, 40, true, "ns");
  if (auto* p = c.Get(Name("BM_Report_Engine", 1000, 1))) Verdict("report, 1000 endpoints", p->ns, 30, true, "ns");
  for (int64_t n : kSizes) {
    auto* one = c.Get(Name("BM_Pick_Engine", n, 1));
    auto* two = c.Get(Name("BM_Pick_Engine", n, 2));
    if (one && two && one->rate > 0) {
      Verdict(("2-thread pick rate / 1-thread, " + std::to_string(n) + " endpoints").c_str(),
              two->rate / one->rate, 1.7, false, "x");
    }
  }
  for (int64_t n : kSizes) {
    if (auto* p = c.Get(Name("BM_PickReport_EngineLoadAware", n, 1))) {
      Verdict(("load-aware pick+report, " + std::to_string(n) + " endpoints").c_str(), p->ns,
              n >= 10000 ? 80 : 40, true, "ns");
      if (auto* ref = c.Get(Name("BM_PickReport_P2cPeakEwma", n, 1))) {
        Verdict(("load-aware / P2C peak-EWMA, " + std::to_string(n) + " endpoints").c_str(),
                p->ns / ref->ns, 1.5, true, "x");
      }
    }
  }
  {
    auto* one = c.Get(Name("BM_PickReport_EngineLoadAware", 3, 1));
    auto* two = c.Get(Name("BM_PickReport_EngineLoadAware", 3, 2));
    if (one && two && one->rate > 0) {
      Verdict("2-thread load-aware pick+report rate / 1-thread, 3 endpoints", two->rate / one->rate,
              1.7, false, "x");
    }
  }
  if (auto* p = c.Get("BM_Cycle_Engine/endpoints:10000/reports:20/iterations:10/manual_time")) {
    Verdict("controller cycle, 10000 endpoints", p->ns, 2, true, "ms");  // unit: ms
  }
  if (auto* p = c.Get("BM_SnapshotJson/endpoints:100000")) {
    Verdict("snapshot JSON, 100000 endpoints", p->ns / 1e3, 100, true, "ms");  // unit: us
  }
  if (auto* p = c.Get("BM_Memory/endpoints:10000/reports:20/iterations:1")) {
    Verdict("state per endpoint (10000, steady)", p->counters.at("bytes_per_endpoint"), 2048, true, "B");
  }
  // load_report_bench.cc: the header's parse and record, beside the completion it rides on.
  const auto* plain = c.Get("BM_LoadReport_Complete");
  for (const char* form : {"Text", "Json"}) {
    const auto* with = c.Get(std::string("BM_LoadReport_CompleteWith") + form);
    if (!plain || !with) continue;
    // CPU time beside wall time: on a shared machine the wall time also counts the waits.
    std::printf("  load report (%s): complete %.1f ns wall / %.1f ns CPU, with the header %.1f ns "
                "wall / %.1f ns CPU\n",
                form, plain->ns, plain->cpu_ns, with->ns, with->cpu_ns);
    Verdict((std::string("header parse + record, wall (") + form + ")").c_str(),
            with->ns - plain->ns, 150, true, "ns");
    Verdict((std::string("header parse + record, CPU (") + form + ")").c_str(),
            with->cpu_ns - plain->cpu_ns, 150, true, "ns");
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  PrintSummary(collector);
  benchmark::Shutdown();
  return 0;
}
