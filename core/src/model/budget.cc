#include "model/budget.h"

#include <algorithm>
#include <cmath>

namespace weighted {

uint32_t BudgetWindowCycles(const Config& cfg) {
  const int64_t interval = cfg.controller.interval_ms;
  // The config refuses a window of more than 1000 cycles (config_json.cc).
  return static_cast<uint32_t>(
      std::max<int64_t>(1, (cfg.budget.window_ms + interval - 1) / interval));
}

double BudgetTarget(const Config::Budget& b, uint64_t window_results) {
  // A window of n requests at the budget's rate has a sampling noise of sqrt(b (1 - b) / n):
  // aim that many (kBudgetNoiseZ) below the budget when it is more than target_fraction asks
  // for, since the budget holds for the worst window. Never below a tenth of the budget.
  const double n = double(std::max<uint64_t>(window_results, 1));
  const double noise = kBudgetNoiseZ * std::sqrt(b.max_error_rate * (1 - b.max_error_rate) / n);
  return std::max(b.max_error_rate * 0.1,
                  std::min(b.max_error_rate * b.target_fraction, b.max_error_rate - noise));
}

bool StepBudget(const Config& cfg, const BudgetInput& in, BudgetState* s) {
  const Config::Budget& b = cfg.budget;
  if (!s->on) {
    *s = BudgetState{};
    s->on = true;
    s->price = std::clamp(cfg.picker.error_cost, b.min_error_cost, b.max_error_cost);
  }
  const uint32_t n = BudgetWindowCycles(cfg);
  if (s->cycles.size() != n) {  // a reload changed the window: start it afresh
    s->cycles.assign(n, BudgetState::Cycle{0, 0});
    s->next = 0;
    s->window_results = s->window_failures = 0;
  }
  BudgetState::Cycle& oldest = s->cycles[s->next];
  s->window_results += in.results - oldest.results;
  s->window_failures += in.failures - oldest.failures;
  oldest = {in.results, in.failures};
  s->next = (s->next + 1) % n;

  s->price = std::clamp(s->price, b.min_error_cost, b.max_error_cost);
  const bool was_met = s->met;
  if (s->window_results == 0) return false;  // no evidence: everything holds
  s->observed = double(s->window_failures) / double(s->window_results);
  s->target = BudgetTarget(b, s->window_results);
  const double before = s->price;
  const bool over = s->observed > s->target;
  // Worse than the last window by more than kBudgetWorse and by more than kBudgetNoiseZ
  // standard errors of the two windows' difference: a few failures more are noise.
  const double spread = std::sqrt((s->observed + std::max(s->last_observed, 0.0)) /
                                  double(s->window_results));
  const bool worse = s->last_observed >= 0 && s->observed > s->last_observed * kBudgetWorse &&
                     s->observed - s->last_observed > kBudgetNoiseZ * spread;
  if (!over) {
    s->searching = false;
    // Anti-windup: not lowered while no endpoint's failure term reaches 1 (then the price
    // changes next to nothing, and a price run down during a healthy spell would let the next
    // fault's first cycles through at a throwaway price). Sized by the worse of the last two
    // windows: a quiet window right after one over the target does not undo the raise.
    if (in.lever * s->price >= 1) {
      const double ratio = std::max(s->observed, s->last_observed) / s->target;
      s->price *= std::max(1 / kBudgetMaxCut, std::pow(ratio, kBudgetCutGain));
    }
  } else if (s->searching || (s->last_step >= kBudgetSearchMinRaise && worse)) {
    // A raise made errors worse: the price no longer buys them down (the healthy
    // endpoints are full and their queues fail, or every endpoint fails alike). Minimise the
    // errors instead, by perturb and observe, biased down: with the errors flat, the lower
    // price is the one that buys throughput, so a raise is kept only when it lowered the
    // errors by a tenth, and the price goes up again only when a cut made them clearly worse.
    s->searching = true;
    int dir = -1;
    if (s->direction > 0) dir = s->observed < s->last_observed * 0.9 ? 1 : -1;
    if (s->direction < 0) dir = s->observed > s->last_observed * 1.5 ? 1 : -1;
    s->price *= dir > 0 ? kBudgetSearchStep : 1 / kBudgetSearchStep;
  } else {
    s->price *= std::min(kBudgetMaxRaise, std::pow(s->observed / s->target, kBudgetRaiseGain));
  }
  s->price = std::clamp(s->price, b.min_error_cost, b.max_error_cost);
  s->direction = s->price > before ? 1 : s->price < before ? -1 : 0;
  s->last_step = s->price / before;
  s->last_observed = s->observed;
  s->met = s->observed <= b.max_error_rate;
  s->limited = !s->met && (s->searching || s->price >= b.max_error_cost);
  return s->met != was_met;
}

double EffectiveErrorCost(const Config& cfg, const BudgetState& s) {
  const Config::Budget& b = cfg.budget;
  if (b.max_error_rate <= 0) return cfg.picker.error_cost;
  // Before the budget's first cycle the price is where the controller will start.
  return std::clamp(s.on ? s.price : cfg.picker.error_cost, b.min_error_cost, b.max_error_cost);
}

}  // namespace weighted
