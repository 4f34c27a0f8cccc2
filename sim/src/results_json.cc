// Results as JSON (shape documented in sim.h). NaN and absent values become null.
#include <cmath>

#include <nlohmann/json.hpp>

#include "weighted_sim/sim.h"

namespace weighted_sim {
namespace {

using nlohmann::json;

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json Nums(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(std::isfinite(x) ? json(x) : json(nullptr));
  return a;
}

json ScenarioJson(const Scenario& sc, uint64_t seed) {
  json j = {{"name", sc.name}, {"description", sc.description}, {"duration_s", sc.duration_s},
            {"seed", seed}};
  json backends = json::array();
  for (const BackendSpec& b : sc.backends)
    backends.push_back({{"id", b.id}, {"weight", b.weight}, {"workers", b.workers}});
  j["backends"] = backends;
  j["clients"] = sc.clients.count;
  json events = json::array();
  for (const FaultSpec& f : sc.faults) {
    events.push_back({{"t_s", f.start_s}, {"kind", "onset"}, {"backend", f.backend},
                      {"type", f.type_name}});
    if (f.end_s)
      events.push_back({{"t_s", *f.end_s}, {"kind", "end"}, {"backend", f.backend},
                        {"type", f.type_name}});
  }
  j["fault_events"] = events;
  return j;
}

json SummaryJson(const Summary& m) {
  json rec = json::array();
  for (const RecoveryRow& r : m.recoveries)
    rec.push_back({{"onset_s", r.onset_s}, {"next_event_s", r.next_event_s},
                   {"recovery_s", Opt(r.recovery_s)}});
  json readm = json::array();
  for (const ReadmissionRow& r : m.readmissions)
    readm.push_back({{"end_s", r.end_s}, {"backend", r.backend},
                     {"readmission_s", Opt(r.readmission_s)}});
  json out = {{"mean_success_tps", m.mean_success_tps},
          {"max_error_rate", m.max_error_rate},
          {"error_rate", m.error_rate},
          {"max_error_rate_5s_settled", Opt(m.max_error_rate_5s_settled)},
          {"recovery_s", m.recoveries.empty() ? json(nullptr) : Opt(m.recoveries[0].recovery_s)},
          {"recoveries", rec},
          {"readmission_s",
           m.readmissions.empty() ? json(nullptr) : Opt(m.readmissions[0].readmission_s)},
          {"readmissions", readm},
          {"mean_cpu", m.mean_cpu},
          {"p50_ms", m.p50_ms},
          {"p99_ms", m.p99_ms},
          {"p999_ms", m.p999_ms},
          {"sick_share", Opt(m.sick_share)},
          {"requests", m.requests},
          {"successes", m.successes},
          {"errors", m.errors},
          {"timeouts", m.timeouts},
          {"probes", m.probes},
          {"panic_picks", m.panic_picks}};
  if (m.share_error_max_pp) {
    out["share_error_max_pp"] = *m.share_error_max_pp;
    out["share_error_p95_pp"] = *m.share_error_p95_pp;
    out["share_error_samples"] = m.share_error_samples;
    json cycles = json::array();  // [end_s, backend, pp] per endpoint and cycle
    for (const Policy::ShareError& s : m.share_errors) cycles.push_back({s.end_s, s.backend, s.pp});
    out["share_errors"] = cycles;
  }
  if (m.decisions) {
    out["weight_changes"] = m.decisions->weight_changes;
    out["isolations"] = m.decisions->isolations;
  }
  return out;
}

json SeriesJson(const Scenario& sc, const Series& s) {
  json t = json::array();
  for (int i = 0; i < s.seconds; ++i) t.push_back(i);
  json j = {{"t_s", t},
            {"success", s.success},
            {"errors", s.errors},
            {"timeouts", s.timeouts},
            {"sent", s.sent},
            {"mean_latency_ms", Nums(s.mean_latency_ms)},
            {"p99_latency_ms", Nums(s.p99_latency_ms)}};
  json backends = json::array();
  for (size_t b = 0; b < s.backends.size(); ++b) {
    const BackendSeries& bs = s.backends[b];
    std::vector<double> share;
    for (int i = 0; i < s.seconds; ++i)
      share.push_back(s.sent[i] > 0 ? static_cast<double>(bs.sent[i]) / s.sent[i] : 0.0);
    backends.push_back({{"id", sc.backends[b].id},
                        {"sent", bs.sent},
                        {"success", bs.success},
                        {"errors", bs.errors},
                        {"share", Nums(share)},
                        {"weight", Nums(bs.weight)},
                        {"cpu", Nums(bs.cpu)},
                        {"memory", Nums(bs.memory)},
                        {"queue", bs.queue},
                        {"sick", bs.sick}});
    if (!bs.state.empty() && !bs.state.front().empty()) backends.back()["state"] = bs.state;
  }
  j["backends"] = backends;
  return j;
}

}  // namespace

std::string ResultsToJson(const Results& r, bool with_series) {
  json j;
  j["scenario"] = ScenarioJson(r.scenario, r.seed);
  json names = json::array();
  json summary = json::object();
  json series = json::object();
  for (const PolicyResult& p : r.policies) {
    names.push_back(p.run.policy);
    summary[p.run.policy] = SummaryJson(p.summary);
    if (with_series) series[p.run.policy] = SeriesJson(r.scenario, p.run.series);
  }
  j["policies"] = names;
  j["summary"] = summary;
  if (with_series) j["series"] = series;
  return j.dump();
}

}  // namespace weighted_sim
