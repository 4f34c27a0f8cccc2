// From a run's series to the benchmark's metrics (definitions in docs/benchmark.md).
#include <algorithm>
#include <cmath>
#include <set>

#include "weighted_sim/metrics.h"
#include "weighted_sim/sim.h"

namespace weighted_sim {
namespace {

int WholeSecond(double t_s) { return static_cast<int>(std::lround(t_s)); }

// Every distinct fault event time (onsets and ends inside the run), ascending.
std::set<int> EventTimes(const Scenario& sc) {
  std::set<int> t;
  for (const FaultSpec& f : sc.faults) {
    t.insert(WholeSecond(f.start_s));
    if (f.end_s && *f.end_s < sc.duration_s) t.insert(WholeSecond(*f.end_s));
  }
  return t;
}

int NextEvent(const std::set<int>& events, int after, int duration) {
  const auto it = events.upper_bound(after);
  return it == events.end() ? duration : *it;
}

}  // namespace

Summary Summarize(const Scenario& sc, const RunOutput& run, const RunOutput& oracle) {
  const Series& s = run.series;
  const int duration = WholeSecond(sc.duration_s);
  Summary m;
  m.mean_success_tps = MeanSuccessTps(s.success, sc.duration_s);
  m.max_error_rate = MaxErrorRate(s.success, s.errors);
  for (int i = 0; i < s.seconds; ++i) {
    m.successes += s.success[i];
    m.errors += s.errors[i];
    m.timeouts += s.timeouts[i];
  }
  m.requests = run.sent;
  m.probes = run.probes;
  m.panic_picks = run.panic_picks;
  m.decisions = run.decisions;
  m.share_errors = run.share_errors;
  if (!run.share_errors.empty()) {
    std::vector<double> e;
    for (const Policy::ShareError& s : run.share_errors) e.push_back(s.pp);
    std::sort(e.begin(), e.end());
    m.share_error_max_pp = e.back();
    m.share_error_p95_pp = e[static_cast<size_t>(std::ceil(0.95 * double(e.size()))) - 1];
    m.share_error_samples = static_cast<int64_t>(e.size());
  }
  m.error_rate = m.successes + m.errors > 0
                     ? static_cast<double>(m.errors) / static_cast<double>(m.successes + m.errors)
                     : 0.0;

  // A fault's first seconds are the detection's; a budget holds from 10 s on.
  constexpr int kSettleS = 10;
  for (const FaultSpec& f : sc.faults) {
    const int until = f.end_s ? std::min(WholeSecond(*f.end_s), duration) : duration;
    const auto w = MaxWindowErrorRate(s.success, s.errors, WholeSecond(f.start_s) + kSettleS, until);
    if (w) m.max_error_rate_5s_settled = std::max(m.max_error_rate_5s_settled.value_or(0.0), *w);
  }

  const std::set<int> events = EventTimes(sc);
  std::set<int> onsets;
  for (const FaultSpec& f : sc.faults) onsets.insert(WholeSecond(f.start_s));
  for (int onset : onsets) {
    const int next = NextEvent(events, onset, duration);
    m.recoveries.push_back(
        {static_cast<double>(onset), static_cast<double>(next),
         RecoveryTime(s.success, s.errors, oracle.series.success, onset, next)});
  }

  double total_weight = 0;
  for (const BackendSpec& b : sc.backends) total_weight += b.weight;
  for (const FaultSpec& f : sc.faults) {
    if (!f.end_s || *f.end_s >= sc.duration_s) continue;
    const int end = WholeSecond(*f.end_s);
    const double fair = sc.backends[f.backend].weight / total_weight;
    m.readmissions.push_back({static_cast<double>(end), f.backend,
                              ReadmissionTime(s.backends[f.backend].sent, s.sent, fair, end,
                                              NextEvent(events, end, duration))});
  }

  double cpu = 0;
  int64_t samples = 0;
  for (const BackendSeries& b : s.backends) {
    for (double c : b.cpu) cpu += c;
    samples += static_cast<int64_t>(b.cpu.size());
  }
  m.mean_cpu = samples > 0 ? cpu / static_cast<double>(samples) : 0.0;

  m.p50_ms = Percentile(run.latencies_ms, 0.50);
  m.p99_ms = Percentile(run.latencies_ms, 0.99);
  m.p999_ms = Percentile(run.latencies_ms, 0.999);
  if (run.sent_while_sick > 0)
    m.sick_share = static_cast<double>(run.sent_to_sick) / static_cast<double>(run.sent_while_sick);
  return m;
}

}  // namespace weighted_sim
