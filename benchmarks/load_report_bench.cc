// A server's load report on every response: the endpoint-load-metrics header parsed and
// recorded in the same call as the completion (wt_service_complete_with_load), against the plain
// completion in the same run. The target is the difference: parse + record <= 150 ns per
// response. core_bench.cc's summary prints it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <benchmark/benchmark.h>

#include "weighted/weighted.h"

namespace {

// What the Spring filter and the Python middleware send: CPU, heap, both pools, rps and eps.
constexpr const char* kText =
    "TEXT cpu_utilization=0.42, mem_utilization=0.61, named_metrics.thread_pool=0.35, "
    "named_metrics.connection_pool=0.2, rps_fractional=118.5, eps=0.5";
constexpr const char* kJson =
    R"(JSON {"cpu_utilization": 0.42, "mem_utilization": 0.61, "named_metrics": )"
    R"({"thread_pool": 0.35, "connection_pool": 0.2}, "rps_fractional": 118.5, "eps": 0.5})";

void Ok(wt_status s) {
  if (s != WT_OK) {
    std::fprintf(stderr, "%s: %s\n", wt_status_name(s), wt_last_error());
    std::abort();
  }
}

struct Bench {
  Bench() {
    const char* cfg = R"({"seed": 1, "picker": {"mode": "weighted"}})";
    Ok(wt_engine_create(cfg, std::strlen(cfg), WT_CLOCK_MANUAL, &engine));
    Ok(wt_engine_service(engine, "svc", &service));
    std::string ids[100];
    wt_endpoint_spec specs[100];
    for (int i = 0; i < 100; ++i) {
      ids[i] = "10.0.0." + std::to_string(i) + ":8080";
      specs[i] = WT_ENDPOINT_SPEC_INIT;
      specs[i].id = ids[i].c_str();
      specs[i].base_weight = 1;
    }
    Ok(wt_service_set_endpoints(service, specs, 100, nullptr, nullptr, nullptr));
  }
  ~Bench() { wt_engine_destroy(engine); }
  wt_engine* engine = nullptr;
  wt_service* service = nullptr;
};

Bench& Shared() {
  static Bench b;
  return b;
}

// The baseline: a pick and its completion.
void BM_LoadReport_Complete(benchmark::State& state) {
  Bench& b = Shared();
  wt_pick p = WT_PICK_INIT;
  for (auto _ : state) {
    wt_service_pick(b.service, &p);
    benchmark::DoNotOptimize(wt_service_complete(b.service, &p, 12.5, WT_OUTCOME_SUCCESS));
  }
  state.SetItemsProcessed(state.iterations());
}

void CompleteWith(benchmark::State& state, const char* header) {
  Bench& b = Shared();
  const size_t len = std::strlen(header);
  wt_pick p = WT_PICK_INIT;
  for (auto _ : state) {
    wt_service_pick(b.service, &p);
    benchmark::DoNotOptimize(
        wt_service_complete_with_load(b.service, &p, 12.5, WT_OUTCOME_SUCCESS, header, len));
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_LoadReport_CompleteWithText(benchmark::State& state) { CompleteWith(state, kText); }
void BM_LoadReport_CompleteWithJson(benchmark::State& state) { CompleteWith(state, kJson); }

// The parse alone, for a C user who only wants the figures.
void BM_LoadReport_ParseText(benchmark::State& state) {
  Bench& b = Shared();
  wt_load_report r = WT_LOAD_REPORT_INIT;
  const size_t len = std::strlen(kText);
  for (auto _ : state) benchmark::DoNotOptimize(wt_engine_parse_load_report(b.engine, kText, len, &r));
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_LoadReport_Complete);
BENCHMARK(BM_LoadReport_CompleteWithText);
BENCHMARK(BM_LoadReport_CompleteWithJson);
BENCHMARK(BM_LoadReport_ParseText);
