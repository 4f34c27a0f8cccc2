#include "model/budget.h"

#include <algorithm>
#include <cmath>

#include <cstdlib>
namespace weighted {
namespace {
double Env(const char* n, double d) { const char* v = std::getenv(n); return v ? std::atof(v) : d; }
}

uint32_t BudgetWindowCycles(const Config& cfg) {
  const int64_t interval = cfg.controller.interval_ms;
  // The config refuses a window of more than 1000 cycles (config_json.cc).
  return static_cast<uint32_t>(std::max<int64_t>(1, (cfg.budget.window_ms + interval - 1) / interval));
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
  const double target = b.max_error_rate * b.target_fraction;
  // Integral action on the logarithm of the price: the price is multiplied by
  // (observed / target)^gain, bounded per cycle and in value. Anti-windup: the price stops at
  // its bounds, and it is not lowered while no endpoint's failure term reaches 1 (then the
  // price changes next to nothing, and a price run down during a healthy spell would let the
  // next fault's first cycles through at a throwaway price).
  static const double gu = Env("WTB_GU", kBudgetGain), gd = Env("WTB_GD", kBudgetGain),
                      mr = Env("WTB_MR", kBudgetMaxRaise), mc = Env("WTB_MC", kBudgetMaxCut);
  if (s->observed > target) {
    s->price *= std::min(mr, std::pow(s->observed / target, gu));
  } else if (in.lever * s->price >= 1) {
    const double ratio = s->observed / target;  // 0 when the window had no failure
    s->price *= std::max(1 / mc, std::pow(ratio, gd));
  }
  s->price = std::clamp(s->price, b.min_error_cost, b.max_error_cost);
  s->met = s->observed <= b.max_error_rate;
  s->limited = !s->met && s->price >= b.max_error_cost;
  return s->met != was_met;
}

double EffectiveErrorCost(const Config& cfg, const BudgetState& s) {
  if (cfg.budget.max_error_rate <= 0 || !s.on) {
    if (cfg.budget.max_error_rate <= 0) return cfg.picker.error_cost;
    return std::clamp(cfg.picker.error_cost, cfg.budget.min_error_cost, cfg.budget.max_error_cost);
  }
  return std::clamp(s.price, cfg.budget.min_error_cost, cfg.budget.max_error_cost);
}

}  // namespace weighted
