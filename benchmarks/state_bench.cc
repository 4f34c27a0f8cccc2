// Google Benchmark suite for the state file (export.state_file) and its monitor (wt_monitor_*),
// through the C API as a caller links it. Each figure has its baseline in the same run:
//   - the controller cycle at 1 000 endpoints with the file and without (real clock: the cycle
//     hands the snapshot to the writer's thread; the benchmark waits for the write untimed so that
//     it never competes with the next timed cycle), and the same on the manual clock, where the
//     write runs inside the cycle (what publishing costs in all);
//   - picks at 1 000 endpoints with the file and without, alone and while a thread runs cycles
//     that publish;
//   - a monitor's snapshot, history and events of a 1 000-endpoint file, and attaching to it.
// At the end it prints the ratios and the targets (docs/state-file.md, docs/performance.md).
//
// Run: build/release/benchmarks/weighted_state_bench [--benchmark_repetitions=5 ...]
// `make bench-state` runs it with repetitions; `make bench-smoke` briefly.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
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

const std::string& Dir() {
  static const std::string d = [] {
    char tmpl[] = "/tmp/weighted-state-bench-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    return std::string(tmpl);
  }();
  return d;
}

std::string Config(bool file, const std::string& name) {
  std::string c = R"({"seed": 1, "picker": {"mode": "weighted"})";
  if (file) c += R"(, "export": {"state_file": ")" + Dir() + "/" + name + R"(.state"})";
  return c + "}";
}

struct Fleet {
  wt_engine* engine = nullptr;
  wt_service* service = nullptr;
  std::vector<uint64_t> keys;
  std::string path;

  Fleet(int n, bool file, int clock, const std::string& name) {
    const std::string cfg = Config(file, name);
    if (file) path = Dir() + "/" + name + ".state";
    Check(wt_engine_create(cfg.c_str(), cfg.size(), clock, &engine), "create");
    Check(wt_engine_service(engine, "bench", &service), "service");
    std::vector<std::string> ids(n);
    std::vector<wt_endpoint_spec> specs(n, wt_endpoint_spec WT_ENDPOINT_SPEC_INIT);
    for (int i = 0; i < n; ++i) {
      ids[i] = "10.0." + std::to_string(i >> 8) + "." + std::to_string(i & 255) + ":8080";
      specs[i].id = ids[i].c_str();
      specs[i].base_weight = double(1 + (i * 7) % 10);
    }
    keys.resize(n);
    Check(wt_service_set_endpoints(service, specs.data(), specs.size(), nullptr, keys.data(),
                                   nullptr),
          "set_endpoints");
  }
  ~Fleet() { wt_engine_destroy(engine); }

  // `per_endpoint` reports on every endpoint (lognormal latencies around 20 ms, 1% 5xx).
  void Traffic(int per_endpoint, uint64_t* seq) {
    static const std::vector<double> lat = [] {
      std::mt19937_64 rng(42);
      std::lognormal_distribution<double> d(std::log(20.0), 0.3);
      std::vector<double> v(4096);
      for (double& x : v) x = d(rng);
      return v;
    }();
    for (int r = 0; r < per_endpoint; ++r) {
      for (uint64_t k : keys) {
        const uint64_t i = (*seq)++;
        const int outcome = i % 100 == 99 ? WT_OUTCOME_HTTP_5XX : WT_OUTCOME_SUCCESS;
        Check(wt_service_report_key(service, k, lat[i & 4095], outcome), "report");
      }
    }
  }
  void DrainEvents() {
    wt_event ev = WT_EVENT_INIT;
    int has = 1;
    while (has) Check(wt_engine_poll_event(engine, &ev, &has), "poll");
  }
};

// How many history points the file holds, read as another process would.
uint64_t HistoryPoints(wt_monitor* m) {
  char* text = nullptr;
  Check(wt_monitor_info_json(m, &text, nullptr), "info");
  const char* p = std::strstr(text, "\"history_points\":");
  const uint64_t n = p ? std::strtoull(p + std::strlen("\"history_points\":"), nullptr, 10) : 0;
  wt_free(text);
  return n;
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// One controller cycle of n endpoints with `reports` reports each since the last; clock:0 real
// (the write on the writer's thread, waited for untimed) | 1 manual (the write inside the cycle).
// file:0 no file | 1 the file | 2 no file, but a snapshot serialised between cycles (untimed):
// the writer's thread serialises ~1 MB between two cycles, which evicts the cycle's data from
// the caches; arm 2 has the same eviction without a file, so that file:1 against file:2 is what
// the file itself costs the cycle and file:1 against file:0 is the whole effect.
void BM_StateCycle(benchmark::State& state) {
  const int n = int(state.range(0)), reports = int(state.range(1));
  const bool file = state.range(2) == 1, scrape = state.range(2) == 2;
  const int clock = int(state.range(3));
  Fleet f(n, file, clock, "cycle-" + std::to_string(clock));
  wt_monitor* mon = nullptr;
  if (file) Check(wt_monitor_open(f.path.c_str(), &mon), "monitor_open");
  uint64_t seq = 0, cycles = 0;
  auto settle = [&] {
    // The real-clock writer publishes on its own thread: wait (untimed) until this cycle's
    // point is in the file, so that it never competes with the next timed cycle.
    while (mon && clock == WT_CLOCK_REAL && HistoryPoints(mon) < cycles) std::this_thread::yield();
  };
  for (int warm = 0; warm < 3; ++warm) {
    f.Traffic(reports, &seq);
    Check(wt_engine_run_cycle(f.engine), "cycle");
    ++cycles;
    settle();
  }
  double cpu_s = 0;
  for (auto _ : state) {
    f.Traffic(reports, &seq);
    f.DrainEvents();
    const double c0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    Check(wt_engine_run_cycle(f.engine), "cycle");
    const auto t1 = std::chrono::steady_clock::now();
    cpu_s += ThreadCpuSeconds() - c0;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    ++cycles;
    settle();
    if (scrape) {  // untimed, as a dashboard or a Prometheus scrape between two cycles
      char* text = nullptr;
      Check(wt_engine_snapshot_json(f.engine, &text, nullptr), "snapshot");
      wt_free(text);
    }
  }
  state.counters["cpu_ms"] = cpu_s * 1e3 / double(state.iterations());
  wt_monitor_close(mon);
}

// Picks at n endpoints, file:0|1, background:0|1 (a thread running a cycle every 2 ms, which
// publishes when the file is on: far more often than the 5 s default, to make any effect show).
void BM_StatePick(benchmark::State& state) {
  const int n = int(state.range(0));
  const bool file = state.range(1) != 0, background = state.range(2) != 0;
  Fleet f(n, file, WT_CLOCK_MANUAL, "pick-" + std::to_string(state.range(2)));
  uint64_t seq = 0;
  f.Traffic(5, &seq);
  Check(wt_engine_run_cycle(f.engine), "cycle");
  std::atomic<bool> stop{false};
  std::thread cycler;
  if (background) {
    cycler = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        Check(wt_engine_run_cycle(f.engine), "cycle");
        f.DrainEvents();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  wt_pick p = WT_PICK_INIT;
  for (auto _ : state) {
    wt_service_pick(f.service, &p);
    benchmark::DoNotOptimize(p);
  }
  stop = true;
  if (cycler.joinable()) cycler.join();
  state.SetItemsProcessed(state.iterations());
}

// A file of n endpoints with a full history (240 points) and its events, written once.
const std::string& ReaderFile(int n) {
  static std::map<int, std::string> paths;
  static std::map<int, std::unique_ptr<Fleet>> fleets;
  auto& path = paths[n];
  if (path.empty()) {
    auto f = std::make_unique<Fleet>(n, true, WT_CLOCK_MANUAL, "reader-" + std::to_string(n));
    uint64_t seq = 0;
    for (int c = 0; c < 240; ++c) {
      f->Traffic(c < 3 ? 20 : 1, &seq);
      Check(wt_engine_advance(f->engine, 5'000'000'000), "advance");
      f->DrainEvents();
    }
    path = f->path;
    fleets[n] = std::move(f);  // keeps writing nothing more; the file stays "running"
  }
  return path;
}

template <typename Fn>
void ReadLoop(benchmark::State& state, Fn&& read) {
  wt_monitor* m = nullptr;
  Check(wt_monitor_open(ReaderFile(int(state.range(0))).c_str(), &m), "monitor_open");
  size_t bytes = 0;
  for (auto _ : state) {
    char* text = nullptr;
    Check(read(m, &text, &bytes), "read");
    wt_free(text);
  }
  state.counters["bytes"] = double(bytes);
  wt_monitor_close(m);
}

void BM_MonitorSnapshot(benchmark::State& state) {
  ReadLoop(state, [](wt_monitor* m, char** t, size_t* n) { return wt_monitor_snapshot_json(m, t, n); });
}
void BM_MonitorHistory(benchmark::State& state) {
  ReadLoop(state, [](wt_monitor* m, char** t, size_t* n) {
    return wt_monitor_history_json(m, 0, 0, t, n);
  });
}
void BM_MonitorEvents(benchmark::State& state) {
  ReadLoop(state, [](wt_monitor* m, char** t, size_t* n) {
    return wt_monitor_events_json(m, 0, 0, t, n);
  });
}

// Attaching: open (map, check the header) and close; with_snapshot:1 also reads the first
// snapshot, which is what a console does before it can show anything.
void BM_MonitorAttach(benchmark::State& state) {
  const std::string& path = ReaderFile(int(state.range(0)));
  const bool with_snapshot = state.range(1) != 0;
  for (auto _ : state) {
    wt_monitor* m = nullptr;
    Check(wt_monitor_open(path.c_str(), &m), "monitor_open");
    if (with_snapshot) {
      char* text = nullptr;
      Check(wt_monitor_snapshot_json(m, &text, nullptr), "snapshot");
      wt_free(text);
    }
    wt_monitor_close(m);
  }
}

}  // namespace

BENCHMARK(BM_StateCycle)
    ->ArgNames({"endpoints", "reports", "file", "clock"})
    ->Args({1000, 20, 0, WT_CLOCK_REAL})->Args({1000, 20, 1, WT_CLOCK_REAL})
    ->Args({1000, 20, 2, WT_CLOCK_REAL})
    ->Args({1000, 20, 0, WT_CLOCK_MANUAL})->Args({1000, 20, 1, WT_CLOCK_MANUAL})
    ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50);
BENCHMARK(BM_StatePick)
    ->ArgNames({"endpoints", "file", "background"})
    ->Args({1000, 0, 0})->Args({1000, 1, 0})->Args({1000, 0, 1})->Args({1000, 1, 1})
    ->UseRealTime();
BENCHMARK(BM_MonitorSnapshot)->Arg(1000)->ArgName("endpoints")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MonitorHistory)->Arg(1000)->ArgName("endpoints")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MonitorEvents)->Arg(1000)->ArgName("endpoints")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MonitorAttach)
    ->ArgNames({"endpoints", "with_snapshot"})->Args({1000, 0})->Args({1000, 1})
    ->Unit(benchmark::kMicrosecond);

namespace {

class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      auto& slot = runs_[r.run_name.str()];
      if (r.run_type == Run::RT_Aggregate || !slot.is_agg) {
        slot.ns = r.GetAdjustedRealTime();  // in the benchmark's unit
        slot.is_agg = r.run_type == Run::RT_Aggregate;
        for (auto& [k, v] : r.counters) slot.counters[k] = double(v);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  struct Result {
    double ns = 0;
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

void Verdict(const char* what, double value, double bar, const char* unit) {
  std::printf("  %-52s %10.3f %-3s (target <= %g: %s)\n", what, value, unit, bar,
              value <= bar ? "met" : "MISSED");
}

void PrintSummary(const Collector& c) {
  std::printf("\n== state file: with / without, same run ==\n");
  auto cycle = [&](int file, int clock) {
    return c.Get("BM_StateCycle/endpoints:1000/reports:20/file:" + std::to_string(file) +
                 "/clock:" + std::to_string(clock) + "/iterations:50/manual_time");
  };
  auto ms = [](const Collector::Result* r) { return r->counters.at("cpu_ms"); };
  for (int clock : {WT_CLOCK_REAL, WT_CLOCK_MANUAL}) {
    auto* off = cycle(0, clock);
    auto* on = cycle(1, clock);
    if (!off || !on) continue;
    std::printf("  cycle, 1000 endpoints, %-6s clock, no file -> file: wall %8.1f -> %8.1f us,"
                " cpu %.3f -> %.3f ms  (cpu x%.3f)\n", clock == WT_CLOCK_REAL ? "real" : "manual",
                off->ns, on->ns, ms(off), ms(on), ms(on) / ms(off));
  }
  if (auto *scr = cycle(2, WT_CLOCK_REAL), *on = cycle(1, WT_CLOCK_REAL); scr && on) {
    std::printf("  cycle, 1000 endpoints, real   clock, snapshot between cycles -> file: wall"
                " %8.1f -> %8.1f us, cpu %.3f -> %.3f ms  (cpu x%.3f)\n", scr->ns, on->ns,
                ms(scr), ms(on), ms(on) / ms(scr));
  }
  auto pick = [&](int file, int bg) {
    return c.Get("BM_StatePick/endpoints:1000/file:" + std::to_string(file) +
                 "/background:" + std::to_string(bg) + "/real_time");
  };
  for (int bg : {0, 1}) {
    auto* off = pick(0, bg);
    auto* on = pick(1, bg);
    if (off && on) {
      std::printf("  pick, 1000 endpoints%-24s %8.2f ns -> %8.2f ns  x%.3f\n",
                  bg ? ", cycles in background:" : ":", off->ns, on->ns, on->ns / off->ns);
    }
  }
  std::printf("\n== targets (this run) ==\n");
  // CPU time of the cycle's thread: on a shared machine its wall time also counts the time
  // other processes held the core.
  if (auto *off = cycle(0, WT_CLOCK_REAL), *on = cycle(1, WT_CLOCK_REAL); off && on) {
    Verdict("cycle cpu, file / no file - 1 (whole effect)", ms(on) / ms(off) - 1, 0.10, "");
  }
  if (auto *scr = cycle(2, WT_CLOCK_REAL), *on = cycle(1, WT_CLOCK_REAL); scr && on) {
    Verdict("cycle cpu, file / same eviction without file - 1", ms(on) / ms(scr) - 1, 0.10, "");
  }
  if (auto* r = c.Get("BM_MonitorSnapshot/endpoints:1000")) {
    Verdict("reader snapshot, 1000 endpoints", r->ns / 1e3, 5, "ms");
  }
  if (auto* r = c.Get("BM_MonitorAttach/endpoints:1000/with_snapshot:1")) {
    Verdict("attach + first snapshot, 1000 endpoints", r->ns / 1e3, 50, "ms");
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
  std::string cmd = "rm -rf '" + Dir() + "'";
  return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
