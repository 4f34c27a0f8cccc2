// Read-only views of the whole engine: the JSON snapshot and the Prometheus exposition. Both
// show the controller's view as of its last cycle plus live lifetime counters.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include "engine.h"

namespace weighted {

namespace {

using nlohmann::json;

constexpr const char* kOutcomeNames[kOutcomes] = {"success", "http_5xx", "timeout",
                                                  "connect_error", "business_error"};
constexpr const char* kResourceNames[kResources] = {"cpu", "memory", "thread_pool",
                                                    "connection_pool"};

json WindowJson(const WindowStats& s) {
  json errors = json::object();
  for (int o = 1; o < kOutcomes; ++o) errors[kOutcomeNames[o]] = s.outcomes[o];
  json res = json::object();
  for (int i = 0; i < kResources; ++i) {
    res[kResourceNames[i]] = s.resource_known[i] ? json(s.resources[i]) : json(nullptr);
  }
  return {{"requests", s.requests}, {"errors", errors}, {"error_rate", s.error_rate},
          {"mean_ms", s.mean_ms}, {"p95_ms", s.p95_ms}, {"p99_ms", s.p99_ms},
          {"resources", res}};
}

json EndpointJson(const Endpoint& ep, uint32_t index, int64_t now) {
  const ControlState& c = ep.ctl;
  json rules = json::array();
  for (const RuleHit& h : c.eval.hits) {
    rules.push_back({{"metric", MetricName(h.metric)}, {"value", h.evaluated ? json(h.value) : json(nullptr)},
                     {"threshold", h.threshold}, {"penalty", h.penalty}, {"fired", h.fired},
                     {"contribution", h.fired ? h.penalty : 0.0}});
  }
  json totals = json::object();
  for (int o = 0; o < kOutcomes; ++o) totals[kOutcomeNames[o]] = ep.stats.Lifetime(o);
  return {{"id", ep.id}, {"index", index}, {"key", ep.key}, {"state", StateName(c.state)},
          {"known", c.known}, {"slow_start", c.slow_start},
          {"base_weight", c.base}, {"weight", c.weight}, {"target", c.target},
          {"effective_weight", c.effective}, {"penalty", c.eval.penalty}, {"rules", rules},
          {"window", WindowJson(c.stats)}, {"inflight", ep.inflight.load()},
          {"isolated_for_ms", c.state == State::kIsolated ? (now - c.isolated_since_ns) / kNsPerMs : 0},
          {"forced_restores", c.forced_restores}, {"totals", totals}};
}

}  // namespace

std::string Engine::SnapshotJson() {
  reclaimer_.Collect();  // settles the totals of removed endpoints that no reader holds
  const int64_t now = Now();
  auto cfg = config();
  json services = json::array();
  std::lock_guard lock(services_mu_);
  for (auto& [name, svc] : services_) {
    svc->Inspect([&](Service& s) {
      json eps = json::array();
      for (uint32_t i = 0; i < s.endpoints().size(); ++i) eps.push_back(EndpointJson(*s.endpoints()[i], i, now));
      json removed = json::object();
      for (int o = 0; o < kOutcomes; ++o) removed[kOutcomeNames[o]] = s.removed_total(o);
      services.push_back({{"name", s.name()}, {"epoch", s.epoch()}, {"panic", s.panic()},
                          {"stale_reports", s.stale_reports()}, {"removed_totals", removed},
                          {"endpoints", eps}});
    });
  }
  json doc = {{"version", WT_VERSION_NUMBER}, {"time_ns", now},
              {"clock", manual() ? "manual" : "real"}, {"profile", cfg->profile},
              {"events", {{"total", events_.total()}, {"dropped", events_.dropped()}}},
              {"services", services}};
  return doc.dump();
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
          add(3, l, c.eval.penalty);
          for (const RuleHit& h : c.eval.hits) {
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
