// Shared by the core suite's files (core_bench_*.cc): the engine fleets the benchmarks measure,
// the latency sample, the endpoint sizes and thread counts. Everything here is untimed setup.
#pragma once

#include <cmath>
#include <cstdint>
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

#include "weighted/weighted.h"

namespace wtbench {

inline constexpr int kLatencies = 4096;  // power of two

inline void Check(wt_status s, const char* what) {
  if (s != WT_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", what, wt_status_name(s), wt_last_error());
    std::abort();
  }
}

// Base weights 1..10, as discovery metadata would give them.
inline int BaseWeight(int i) { return 1 + (i * 7) % 10; }

// Latencies of a healthy fleet: lognormal, median 20 ms, sigma 0.3; 1% 5xx.
inline const std::vector<double>& Latencies() {
  static const std::vector<double> v = [] {
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> d(std::log(20.0), 0.3);
    std::vector<double> out(kLatencies);
    for (double& x : out) x = d(rng);
    return out;
  }();
  return v;
}
inline int OutcomeOf(uint64_t i) { return i % 100 == 99 ? WT_OUTCOME_HTTP_5XX : WT_OUTCOME_SUCCESS; }

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

inline constexpr const char* kWeightedConfig = R"({"seed": 1, "picker": {"mode": "weighted"}})";
inline constexpr const char* kLoadAwareConfig = R"({"seed": 1, "picker": {"mode": "load_aware"}})";
// 100 000 endpoints in one service, above the default limit of 65 536.
inline constexpr const char* kLargeConfig =
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
inline Fleet& SharedFleet(int n, bool load_aware = false) {
  static std::mutex mu;
  static std::map<std::pair<int, bool>, std::unique_ptr<Fleet>> fleets;
  std::lock_guard lock(mu);
  auto& f = fleets[{n, load_aware}];
  if (!f) {
    f = std::make_unique<Fleet>(n, load_aware ? kLoadAwareConfig : kWeightedConfig);
  }
  return *f;
}

inline std::vector<int> Weights(int n) {
  std::vector<int> w(n);
  for (int i = 0; i < n; ++i) w[i] = BaseWeight(i);
  return w;
}

inline const std::vector<int64_t> kSizes = {3, 100, 1000, 10000};

// Thread counts of the hot-path benchmarks: 1 and 2 on this 2-core machine; WT_BENCH_THREADS
// (say "1,2,4,8,16") measures the scaling on a larger one (docs/performance.md, "Thread scaling").
inline std::vector<int> ThreadCounts() {
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

inline void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : kSizes) b->Arg(n);
  b->ArgName("endpoints")->UseRealTime();
  for (int t : ThreadCounts()) b->Threads(t);
}

}  // namespace wtbench
