// Read-only views of the whole engine: the JSON snapshot and the Prometheus exposition. Both
// show the controller's view as of its last cycle plus live lifetime counters.
#include <fmt/format.h>

#include "engine.h"
#include "json_writer.h"

namespace weighted {

namespace {

constexpr const char* kOutcomeNames[kOutcomes] = {"success", "http_5xx", "timeout",
                                                  "connect_error", "business_error"};
constexpr const char* kResourceNames[kResources] = {"cpu", "memory", "thread_pool",
                                                    "connection_pool"};

void WindowJson(const WindowStats& s, JsonWriter& w) {
  w.BeginObject().Key("requests").Uint(s.requests);
  w.Key("errors").BeginObject();
  for (int o = 1; o < kOutcomes; ++o) w.Key(kOutcomeNames[o]).Uint(s.outcomes[o]);
  w.EndObject();
  w.Key("error_rate").Double(s.error_rate);
  w.Key("mean_ms").Double(s.mean_ms).Key("p95_ms").Double(s.p95_ms).Key("p99_ms").Double(s.p99_ms);
  w.Key("resources").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    w.Key(kResourceNames[i]);
    if (s.resource_known[i]) w.Double(s.resources[i]);
    else w.Null();
  }
  w.EndObject().EndObject();
}

void EndpointJson(const Endpoint& ep, const Evaluation& eval, uint32_t index, int64_t now,
                  JsonWriter& w) {
  const ControlState& c = ep.ctl;
  w.BeginObject().Key("id").String(ep.id).Key("index").Uint(index).Key("key").Uint(ep.key);
  w.Key("state").String(StateName(c.state)).Key("known").Bool(c.known);
  w.Key("slow_start").Bool(c.slow_start).Key("base_weight").Double(c.base);
  w.Key("weight").Double(c.weight).Key("target").Double(c.target);
  w.Key("effective_weight").Double(c.effective).Key("penalty").Double(c.penalty);
  w.Key("rules").BeginArray();
  for (const RuleHit& h : eval.hits) {
    w.BeginObject().Key("metric").String(MetricName(h.metric)).Key("value");
    if (h.evaluated) w.Double(h.value);
    else w.Null();
    w.Key("threshold").Double(h.threshold).Key("penalty").Double(h.penalty);
    w.Key("fired").Bool(h.fired).Key("contribution").Double(h.fired ? h.penalty : 0.0);
    w.EndObject();
  }
  w.EndArray();
  w.Key("window");
  WindowJson(c.stats, w);
  w.Key("inflight").Int(ep.InFlight());
  w.Key("isolated_for_ms")
      .Int(c.state == State::kIsolated ? (now - c.isolated_since_ns) / kNsPerMs : 0);
  w.Key("forced_restores").Uint(c.forced_restores);
  w.Key("totals").BeginObject();
  for (int o = 0; o < kOutcomes; ++o) w.Key(kOutcomeNames[o]).Uint(ep.stats.Lifetime(o));
  w.EndObject().EndObject();
}

}  // namespace

std::string Engine::SnapshotJson() {
  reclaimer_.Collect();  // settles the totals of removed endpoints that no reader holds
  const int64_t now = Now();
  auto cfg = config();
  JsonWriter w;
  w.BeginObject().Key("version").Uint(WT_VERSION_NUMBER).Key("time_ns").Int(now);
  w.Key("clock").String(manual() ? "manual" : "real").Key("profile").String(cfg->profile);
  w.Key("events").BeginObject().Key("total").Uint(events_.total());
  w.Key("dropped").Uint(events_.dropped()).EndObject();
  w.Key("services").BeginArray();
  std::lock_guard lock(services_mu_);
  for (auto& [name, svc] : services_) {
    svc->Inspect([&](Service& s) {
      w.BeginObject().Key("name").String(s.name()).Key("epoch").Uint(s.epoch());
      w.Key("panic").Bool(s.panic()).Key("stale_reports").Uint(s.stale_reports());
      w.Key("removed_totals").BeginObject();
      for (int o = 0; o < kOutcomes; ++o) w.Key(kOutcomeNames[o]).Uint(s.removed_total(o));
      w.EndObject().Key("endpoints").BeginArray();
      for (uint32_t i = 0; i < s.endpoints().size(); ++i) {
        const Endpoint& ep = *s.endpoints()[i];
        EndpointJson(ep, s.EvaluationOf(ep), i, now, w);
      }
      w.EndArray().EndObject();
    });
  }
  w.EndArray().EndObject();
  return w.Take();
}

namespace {

// Prometheus label values escape backslash, quote and newline.
std::string Escape(std::string_view v) {
  std::string out;
  for (char ch : v) {
    if (ch == '\\' || ch == '"') out += '\\', out += ch;
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

}  // namespace

std::string Engine::Prometheus() {
  struct Family { const char* name; const char* type; const char* help; };
  static const Family kFamilies[] = {
      {"weighted_endpoint_weight", "gauge", "Effective scheduling weight"},
      {"weighted_endpoint_target_weight", "gauge", "Weight the controller moves toward"},
      {"weighted_endpoint_base_weight", "gauge", "Base weight from discovery"},
      {"weighted_endpoint_penalty", "gauge", "Sum of fired rule penalties"},
      {"weighted_endpoint_rule_contribution", "gauge", "Penalty contributed by one rule"},
      {"weighted_endpoint_state", "gauge", "1 for the endpoint's current state"},
      {"weighted_endpoint_latency_ms", "gauge", "Window latency by quantile (mean as \"mean\")"},
      {"weighted_endpoint_error_rate", "gauge", "Window error rate"},
      {"weighted_endpoint_window_requests", "gauge", "Results in the window"},
      {"weighted_endpoint_resource", "gauge", "Window average of a resource gauge"},
      {"weighted_endpoint_outcomes_total", "counter", "Outcomes reported, by class"},
      {"weighted_service_panic", "gauge", "1 while the service is in panic round-robin"},
      {"weighted_service_stale_reports_total", "counter", "Reports on removed endpoints"},
  };
  std::vector<std::string> rows(std::size(kFamilies));
  auto add = [&](int f, const std::string& labels, double v) {
    rows[f] += fmt::format("{}{{{}}} {}\n", kFamilies[f].name, labels, v);
  };
  {
    std::lock_guard lock(services_mu_);
    for (auto& [name, svc] : services_) {
      svc->Inspect([&](Service& s) {
        const std::string sl = fmt::format("service=\"{}\"", Escape(s.name()));
        add(11, sl, s.panic());
        add(12, sl, double(s.stale_reports()));
        for (const Endpoint* ep : s.endpoints()) {
          const ControlState& c = ep->ctl;
          const std::string l = fmt::format("{},endpoint=\"{}\"", sl, Escape(ep->id));
          add(0, l, c.effective);
          add(1, l, c.target);
          add(2, l, c.base);
          add(3, l, c.penalty);
          for (const RuleHit& h : s.EvaluationOf(*ep).hits) {
            add(4, fmt::format("{},rule=\"{}\"", l, MetricName(h.metric)), h.fired ? h.penalty : 0);
          }
          for (State st : {State::kHealthy, State::kDegraded, State::kIsolated, State::kRecovering}) {
            add(5, fmt::format("{},state=\"{}\"", l, StateName(st)), c.state == st);
          }
          add(6, l + ",quantile=\"0.95\"", c.stats.p95_ms);
          add(6, l + ",quantile=\"0.99\"", c.stats.p99_ms);
          add(6, l + ",quantile=\"mean\"", c.stats.mean_ms);
          add(7, l, c.stats.error_rate);
          add(8, l, double(c.stats.requests));
          for (int i = 0; i < kResources; ++i) {
            if (c.stats.resource_known[i]) {
              add(9, fmt::format("{},resource=\"{}\"", l, kResourceNames[i]), c.stats.resources[i]);
            }
          }
          for (int o = 0; o < kOutcomes; ++o) {
            add(10, fmt::format("{},outcome=\"{}\"", l, kOutcomeNames[o]), double(ep->stats.Lifetime(o)));
          }
        }
      });
    }
  }
  std::string out;
  for (size_t f = 0; f < std::size(kFamilies); ++f) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", kFamilies[f].name, kFamilies[f].help,
                       kFamilies[f].name, kFamilies[f].type);
    out += rows[f];
  }
  return out;
}

}  // namespace weighted
