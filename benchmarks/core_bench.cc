// Google Benchmark suite for the core, through the C API exactly as a caller links it
// (libweighted.so). Measured: pick, report, pick+report at 3, 100, 1 000, 10 000
// endpoints, 1 and 2 threads; one controller cycle at 10 000 endpoints; snapshot JSON and
// Prometheus exposition; memory per endpoint. Baselines in the same binary and run: nginx's smooth
// weighted round-robin behind a mutex and Envoy's EDF scheduler, and for the default
// (load-aware) mode a P2C peak-EWMA (Finagle, Linkerd) and Envoy's least-request (baselines.h).
// At the end it prints engine / baseline ratios, thread scaling and the performance targets
// (docs/performance.md) from this same run. WT_BENCH_THREADS=1,2,4,8 sets the thread counts.
//
// Files: core_bench_picks.cc (the hot path and its peers), core_bench_offpath.cc (cycle,
// exports, memory), load_report_bench.cc (the load-report header), this file (the summary).
//
// Run: build/release/benchmarks/weighted_core_bench [--benchmark_repetitions=5 ...]
// `make bench` runs it with repetitions and JSON output; benchmarks/report.py reads that.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "core_bench_common.h"

// ---- same-run ratios ----

namespace {

using namespace wtbench;

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
