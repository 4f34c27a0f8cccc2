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

namespace {

bool Near(double a, double b) { return std::fabs(std::log(a / b)) < 0.01; }

// One cycle of the search that minimises errors when no price meets the budget (the window just
// observed was taken at `before`). The errors against the price are flat at the bottom and rise
// on both sides (a low price feeds the failing endpoints, a high one overloads the others), and
// one window's noise is as large as the slope near the bottom, so comparing each window with the
// last one walks along the flat part into either side. The search compares with the best window
// seen instead: a move that is clearly worse than it (by one standard error of the difference)
// goes back to the best price and turns round with a step of its square root, until the step
// is below kBudgetSearchMinStep and the search holds there. Each window taken at the best price
// replaces the best's rate, so one lucky window does not hold the search for good; one clearly
// worse by kBudgetWorse and kBudgetNoiseZ standard errors while holding (the load moved) starts
// it again. Flat windows move on in the same direction, down first: with the errors flat, the
// lower price is the one that serves more.
void SearchStep(double before, BudgetState* s) {
  const double n = double(s->window_results);
  const double spread = std::sqrt((s->observed + std::max(s->best_observed, 0.0)) / n);
  const auto move = [&] {
    if (s->search_step > 1) s->price = before * std::pow(s->search_step, s->search_dir);
  };
  if (s->best_observed >= 0 && Near(before, s->best_price)) {
    if (s->search_step <= 1 && s->observed > s->best_observed * kBudgetWorse &&
        s->observed - s->best_observed > kBudgetNoiseZ * spread) {
      s->search_step = kBudgetSearchStep;
      s->search_dir = -1;
    }
    s->best_observed = s->observed;
    move();
  } else if (s->best_observed < 0 || s->observed < s->best_observed) {
    s->best_price = before;
    s->best_observed = s->observed;
    move();
  } else if (s->observed > s->best_observed + spread) {
    s->price = s->best_price;
    s->search_dir = -s->search_dir;
    s->search_step = std::sqrt(s->search_step);
    if (s->search_step < kBudgetSearchMinStep) s->search_step = 1;
  } else {
    move();
  }
}

}  // namespace

bool StepBudget(const Config& cfg, const BudgetInput& in, BudgetState* s) {
  const Config::Budget& b = cfg.budget;
  const double start = std::clamp(cfg.picker.error_cost, b.min_error_cost, b.max_error_cost);
  if (!s->on) {
    *s = BudgetState{};
    s->on = true;
    s->price = start;
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
  // A run of raises that doubled the price and left the errors where they were (not lower by
  // a standard error of the two windows' difference).
  const double n_results = double(s->window_results);
  const bool useless =
      !s->searching && s->direction > 0 && s->raise_from > 0 &&
      before >= s->raise_from * kBudgetUselessRaise &&
      s->observed > s->raise_from_observed -
                        std::sqrt((s->observed + s->raise_from_observed) / n_results) &&
      s->raise_from_observed * n_results >= kBudgetMeasureFailures;
  if (!over) {
    s->searching = false;
    // Anti-windup: not lowered while the price is no lever: no endpoint's failure term reaches
    // 1 (then the price changes next to nothing, and a price run down during a healthy spell
    // would let the next fault's first cycles through at a throwaway price) and no endpoint
    // fails more than the target (one that does keeps the errors answering the price, however
    // low, so the feedback stops the descent where the budget is). Once no endpoint fails
    // enough to matter even at the configured price, a price run below it goes back to it: the
    // next fault starts where a fault without a budget would. Cuts are sized by the worse of
    // the last two windows: a quiet window right after one over the target does not undo the
    // raise.
    if (in.lever * s->price >= 1 || in.lever > s->target) {
      const double ratio = std::max(s->observed, s->last_observed) / s->target;
      double gain = kBudgetCutGain;
      const double fewest = std::min(s->observed, s->last_observed) * double(s->window_results);
      if (s->direction < 0 && s->last_step <= 1 / kBudgetMeasureStep &&
          fewest >= kBudgetMeasureFailures) {
        // The last cut moved the errors by this elasticity (<= 0: not at all).
        const double e = s->observed > s->last_observed
                             ? std::log(s->observed / s->last_observed) / std::log(1 / s->last_step)
                             : 0;
        gain = std::max(kBudgetCutGain, 1 / std::max(kBudgetMinElasticity, e));
      }
      // Far under only when the worse window's failures, less than two standard errors, are
      // (a handful of failures is no evidence of how far).
      const double worst = std::max(s->observed, s->last_observed) * double(s->window_results);
      const double high = (worst + 2 * std::sqrt(worst) + 1) / double(s->window_results);
      const double cap = high < kBudgetFarUnder * s->target ? kBudgetFarMaxCut : kBudgetMaxCut;
      s->price *= std::max(1 / cap, std::pow(ratio, gain));
    } else if (in.lever * start < 1) {
      s->price = std::max(s->price, start);
    }
  } else if (s->searching || (s->last_step >= kBudgetSearchMinRaise && worse) || useless) {
    // A raise made errors worse: the price no longer buys them down (the healthy endpoints
    // are full and their queues fail, or every endpoint fails alike). Minimise the errors
    // instead (SearchStep), starting a double step below the price before the raise: that
    // one was already at the edge the raise went over.
    if (!s->searching) {
      s->searching = true;
      s->best_observed = -1;
      s->search_step = kBudgetSearchStep;
      s->search_dir = -1;
      const double from = s->raise_from > 0 ? s->raise_from : before / s->last_step;
      s->price = from / (kBudgetSearchStep * kBudgetSearchStep);
    } else {
      SearchStep(before, s);
    }
  } else {
    s->price *= std::min(kBudgetMaxRaise, std::pow(s->observed / s->target, kBudgetRaiseGain));
  }
  if (s->searching && in.lever > 0) s->price = std::max(s->price, kBudgetSearchMinTerm / in.lever);
  s->price = std::clamp(s->price, b.min_error_cost, b.max_error_cost);
  s->direction = s->price > before ? 1 : s->price < before ? -1 : 0;
  if (s->searching || s->direction <= 0) {
    s->raise_from = 0;
  } else if (s->raise_from == 0) {
    s->raise_from = before;
    s->raise_from_observed = s->observed;
  }
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
