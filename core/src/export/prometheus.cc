#include "export/prometheus.h"

#include <fmt/format.h>

namespace weighted {

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

// Every family once: its name, type and help. The enum names a family where a value is added,
// and the table's order is the order of the exposition.
enum Family : int {
  kWeight, kTargetWeight, kBaseWeight, kPenalty, kRuleContribution, kState, kLatency, kErrorRate,
  kWindowRequests, kResource, kOutcomesTotal, kShare, kExpectedShare, kPickerFailureShare, kPickerLatency,
  kInflight, kServicePanic, kServiceStaleReports, kServiceGuardHeld, kServiceGuardHeadroom,
  kBudget, kBudgetErrorRate, kBudgetMet, kBudgetLimited, kBudgetErrorCost, kFamilyCount
};
struct FamilyInfo { Family family; const char* name; const char* type; const char* help; };
constexpr FamilyInfo kFamilies[] = {
    {kWeight, "weighted_endpoint_weight", "gauge",
     "Scheduling weight after slow start and isolation; the traffic split is "
     "weighted_endpoint_share (load-aware picks compare candidates drawn by weight)"},
    {kTargetWeight, "weighted_endpoint_target_weight", "gauge", "Weight the controller moves toward"},
    {kBaseWeight, "weighted_endpoint_base_weight", "gauge", "Base weight from discovery"},
    {kPenalty, "weighted_endpoint_penalty", "gauge", "Sum of fired rule penalties"},
    {kRuleContribution, "weighted_endpoint_rule_contribution", "gauge",
     "Penalty contributed by one rule"},
    {kState, "weighted_endpoint_state", "gauge", "1 for the endpoint's current state"},
    {kLatency, "weighted_endpoint_latency_ms", "gauge",
     "Window latency by quantile (mean as \"mean\")"},
    {kErrorRate, "weighted_endpoint_error_rate", "gauge", "Window error rate"},
    {kWindowRequests, "weighted_endpoint_window_requests", "gauge", "Results in the window"},
    {kResource, "weighted_endpoint_resource", "gauge", "Window average of a resource gauge"},
    {kOutcomesTotal, "weighted_endpoint_outcomes_total", "counter", "Outcomes reported, by class"},
    {kShare, "weighted_endpoint_share", "gauge",
     "Share of the service's results the endpoint had in the last controller cycle"},
    {kExpectedShare, "weighted_endpoint_expected_share", "gauge",
     "Share of the service's picks the current model expects the endpoint to get next cycle"},
    {kPickerFailureShare, "weighted_endpoint_picker_failure_share", "gauge",
     "Load-aware picker's failure share estimate as the last cycle ended"},
    {kPickerLatency, "weighted_endpoint_picker_latency_ms", "gauge",
     "Load-aware picker's peak-EWMA latency as the last cycle ended"},
    {kInflight, "weighted_endpoint_inflight", "gauge", "Tracked picks not yet finished"},
    {kServicePanic, "weighted_service_panic", "gauge", "1 while the service is in panic round-robin"},
    {kServiceStaleReports, "weighted_service_stale_reports_total", "counter",
     "Reports on removed endpoints"},
    {kServiceGuardHeld, "weighted_service_guard_held", "gauge",
     "Endpoints whose cut or isolation the capacity guard held back in the last cycle"},
    {kServiceGuardHeadroom, "weighted_service_guard_headroom_rps", "gauge",
     "Successes per second the endpoints not cut could still take, as the guard saw them"},
    {kBudget, "weighted_service_error_budget", "gauge",
     "The service's error budget (budget.max_error_rate), while one is set"},
    {kBudgetErrorRate, "weighted_service_error_budget_observed_rate", "gauge",
     "Error rate over the budget's window as the last cycle ended"},
    {kBudgetMet, "weighted_service_error_budget_met", "gauge",
     "1 while the observed error rate is within the budget"},
    {kBudgetLimited, "weighted_service_error_budget_limited", "gauge",
     "1 while over budget and no price meets it (the price is at budget.max_error_cost, or "
     "raising it made errors worse and the controller minimises them)"},
    {kBudgetErrorCost, "weighted_service_error_cost", "gauge",
     "The failure price the load-aware picker uses, set by the budget's controller"},
};
static_assert(std::size(kFamilies) == kFamilyCount);
constexpr bool InEnumOrder() {
  for (int f = 0; f < kFamilyCount; ++f) {
    if (kFamilies[f].family != f) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kFamilies must list the families in the enum's order");

}  // namespace

std::string PrometheusText(Engine& engine) {
  const auto cfg = engine.config();
  const bool load_aware = cfg->picker.mode == PickMode::kLoadAware;
  std::vector<std::string> rows(kFamilyCount);
  auto add = [&](Family f, const std::string& labels, double v) {
    rows[f] += fmt::format("{}{{{}}} {}\n", kFamilies[f].name, labels, v);
  };
  engine.ForEachService([&](Service& svc) {
    svc.Inspect([&](Service& s) {
      const std::vector<double>& expected = s.expected_shares();
      size_t index = 0;
      const std::string sl = fmt::format("service=\"{}\"", Escape(s.name()));
      add(kServicePanic, sl, s.panic());
      add(kServiceStaleReports, sl, double(s.stale_reports()));
      add(kServiceGuardHeld, sl, double(s.guard().held));
      add(kServiceGuardHeadroom, sl, s.guard().headroom_rps);
      if (cfg->budget.max_error_rate > 0) {
        const BudgetState& b = s.budget();
        add(kBudget, sl, cfg->budget.max_error_rate);
        add(kBudgetErrorRate, sl, b.observed);
        add(kBudgetMet, sl, b.met);
        add(kBudgetLimited, sl, b.limited);
        add(kBudgetErrorCost, sl, EffectiveErrorCost(*cfg, b));
      }
      for (const Endpoint* ep : s.endpoints()) {
        const ControlState& c = ep->ctl;
        const std::string l = fmt::format("{},endpoint=\"{}\"", sl, Escape(ep->id));
        add(kWeight, l, c.effective);
        add(kTargetWeight, l, c.target);
        add(kBaseWeight, l, c.base);
        add(kPenalty, l, c.penalty);
        for (const RuleHit& h : s.EvaluationOf(*ep).hits) {
          add(kRuleContribution, fmt::format("{},rule=\"{}\"", l, MetricName(h.metric)),
              h.fired ? h.penalty : 0);
        }
        for (State st : {State::kHealthy, State::kDegraded, State::kIsolated, State::kRecovering,
                         State::kFailing}) {
          add(kState, fmt::format("{},state=\"{}\"", l, StateName(st)), c.state == st);
        }
        add(kLatency, l + ",quantile=\"0.95\"", c.stats.p95_ms);
        add(kLatency, l + ",quantile=\"0.99\"", c.stats.p99_ms);
        add(kLatency, l + ",quantile=\"mean\"", c.stats.mean_ms);
        add(kErrorRate, l, c.stats.error_rate);
        add(kWindowRequests, l, double(c.stats.requests));
        for (int i = 0; i < kResources; ++i) {
          if (c.stats.resource_known[i]) {
            add(kResource, fmt::format("{},resource=\"{}\"", l, ResourceName(i)),
                c.stats.resources[i]);
          }
        }
        add(kShare, l, c.share);
        add(kExpectedShare, l, expected[index++]);
        add(kInflight, l, ep->load.InFlight());
        if (load_aware) {  // the weighted mode keeps no picker estimates
          add(kPickerFailureShare, l, c.picker.failure_share);
          add(kPickerLatency, l, c.picker.latency_ms);
        }
        for (int o = 0; o < kOutcomes; ++o) {
          add(kOutcomesTotal, fmt::format("{},outcome=\"{}\"", l, OutcomeName(o)),
              double(ep->stats.Lifetime(o)));
        }
      }
    });
  });
  std::string out;
  for (const FamilyInfo& f : kFamilies) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
    out += rows[f.family];
  }
  return out;
}

}  // namespace weighted
