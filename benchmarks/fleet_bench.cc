// What a fleet of engines costs (docs/benchmark.md, "A fleet of engines"): the simulator runs
// one engine per client, so 10,000 clients x 500 backends is 10,000 engines of 500 endpoints.
// Measured through the C API on the manual clock, as the simulator drives it:
//   BM_FleetMemory  heap per engine and per endpoint, with and without a 12-endpoint subset
//   BM_FleetCycle   one controller cycle of every engine of a fleet, per engine-cycle, each
//                   engine having taken `reports` results since its last cycle
// The baseline in the same run is the same fleet without a subset: the subset's ratio is
// printed at the end.
//
// Run: build/release/benchmarks/weighted_fleet_bench [--benchmark_repetitions=3]
#include <malloc.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "weighted/weighted.h"

namespace {

void Check(wt_status s, const char* what) {
  if (s != WT_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", what, wt_status_name(s), wt_last_error());
    std::abort();
  }
}

size_t HeapInUse() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// `engines` engines of `endpoints` endpoints each, as the simulator's clients hold them.
struct Fleet {
  std::vector<wt_engine*> engines;
  std::vector<wt_service*> services;

  Fleet(int n_engines, int endpoints, int subset) {
    std::vector<std::string> ids;
    for (int i = 0; i < endpoints; ++i) ids.push_back("10.1." + std::to_string(i / 250) + "." +
                                                     std::to_string(i % 250) + ":8080");
    std::vector<wt_endpoint_spec> specs(ids.size(), wt_endpoint_spec WT_ENDPOINT_SPEC_INIT);
    for (size_t i = 0; i < ids.size(); ++i) {
      specs[i].id = ids[i].c_str();
      specs[i].base_weight = 100;
    }
    for (int e = 0; e < n_engines; ++e) {
      std::string cfg = "{\"seed\": " + std::to_string(e + 1);
      if (subset > 0) {
        cfg += ", \"subset\": {\"mode\": \"fixed\", \"size\": " + std::to_string(subset) +
               ", \"client_id\": \"client-" + std::to_string(e) + "\"}";
      }
      cfg += "}";
      wt_engine* eng = nullptr;
      wt_service* svc = nullptr;
      Check(wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_MANUAL, &eng), "create");
      Check(wt_engine_service(eng, "sim", &svc), "service");
      Check(wt_service_set_endpoints(svc, specs.data(), specs.size(), nullptr, nullptr, nullptr),
            "set_endpoints");
      engines.push_back(eng);
      services.push_back(svc);
    }
  }
  ~Fleet() {
    for (wt_engine* e : engines) wt_engine_destroy(e);
  }
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  void Traffic(int per_engine) {
    for (wt_service* s : services) {
      for (int i = 0; i < per_engine; ++i) {
        wt_pick p = WT_PICK_INIT;
        Check(wt_service_pick(s, &p), "pick");
        Check(wt_service_complete(s, &p, 20.0, WT_OUTCOME_SUCCESS), "complete");
      }
    }
  }
  void Cycle(int64_t ns) {
    for (wt_engine* e : engines) Check(wt_engine_advance(e, ns), "advance");
  }
};

constexpr int64_t kCycleNs = 5'000'000'000;

void BM_FleetMemory(benchmark::State& state) {
  const int n = int(state.range(0)), endpoints = int(state.range(1)), subset = int(state.range(2));
  double per_engine = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const size_t before = HeapInUse();
    Fleet f(n, endpoints, subset);
    for (int c = 0; c < 3; ++c) {  // fill two window slots and a cycle's recorders
      f.Traffic(50);
      f.Cycle(kCycleNs);
    }
    per_engine = double(HeapInUse() - before) / n;
  }
  state.counters["bytes_per_engine"] = per_engine;
  state.counters["bytes_per_endpoint"] = per_engine / endpoints;
}

void BM_FleetCycle(benchmark::State& state) {
  const int n = int(state.range(0)), endpoints = int(state.range(1)), subset = int(state.range(2));
  const int reports = int(state.range(3));
  Fleet f(n, endpoints, subset);
  for (int c = 0; c < 3; ++c) {
    f.Traffic(reports);
    f.Cycle(kCycleNs);
  }
  double cpu_s = 0;
  for (auto _ : state) {
    f.Traffic(reports);
    const double c0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    f.Cycle(kCycleNs);
    const auto t1 = std::chrono::steady_clock::now();
    cpu_s += ThreadCpuSeconds() - c0;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / n);
  }
  // Per engine-cycle, this thread's CPU: on a shared machine wall time counts others' turns.
  state.counters["cpu_us"] = cpu_s * 1e6 / double(state.iterations()) / n;
}

BENCHMARK(BM_FleetMemory)
    ->Args({1000, 500, 0})->Args({1000, 500, 12})->Args({1000, 50, 0})->Args({1000, 50, 12})
    ->ArgNames({"engines", "endpoints", "subset"})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FleetCycle)
    ->Args({1000, 500, 0, 10})->Args({1000, 500, 12, 10})->Args({1000, 50, 0, 10})
    ->Args({1000, 50, 12, 10})
    ->ArgNames({"engines", "endpoints", "subset", "reports"})->UseManualTime()
    ->Unit(benchmark::kMicrosecond)->Iterations(5);

// Keeps every run so main() can print the subset's ratios against the full set.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration) rows[r.benchmark_name()] = r;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, Run> rows;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Collector c;
  benchmark::RunSpecifiedBenchmarks(&c);
  const auto counter = [&](const std::string& name, const char* key) {
    auto it = c.rows.find(name);
    if (it == c.rows.end()) return -1.0;
    auto k = it->second.counters.find(key);
    return k == it->second.counters.end() ? -1.0 : double(k->second);
  };
  for (const char* m : {"500", "50"}) {
    const std::string full = std::string("BM_FleetCycle/engines:1000/endpoints:") + m +
                             "/subset:0/reports:10/iterations:5/manual_time";
    const std::string sub = std::string("BM_FleetCycle/engines:1000/endpoints:") + m +
                            "/subset:12/reports:10/iterations:5/manual_time";
    const double a = counter(full, "cpu_us"), b = counter(sub, "cpu_us");
    if (a > 0 && b > 0) {
      std::printf("cycle CPU per engine at %s endpoints: %.1f us all, %.1f us subset of 12 "
                  "(%.2fx); 10,000 engines x 24 cycles (120 s): %.1f s all, %.1f s subset\n",
                  m, a, b, b / a, a * 240000 / 1e6, b * 240000 / 1e6);
    }
  }
  benchmark::Shutdown();
  return 0;
}
