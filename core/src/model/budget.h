// The error budget's controller: per service, once per controller cycle, it sets the price the
// load-aware picker puts on failures (the schedule's error_cost) from the service's error rate
// over the budget's window. Over the target it raises the price, so failing endpoints win fewer
// picks; under it, it lowers the price, so endpoints that fail a fraction of requests but serve
// the rest take more traffic. It knows counts and a price, not endpoints or picks: the picker's
// cost formula and failure estimates are the schedule's business (pick/), whatever they become.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.h"

namespace weighted {

// What one controller cycle showed the budget.
struct BudgetInput {
  uint64_t results = 0;   // outcomes drained this cycle, every endpoint together
  uint64_t failures = 0;  // of which not successes
  // The largest picker failure share of an endpoint in rotation as the cycle ended: the price
  // moves picks only where price x share is not small against 1 (the cost's failure term).
  double lever = 0;
};

struct BudgetState {
  bool on = false;  // false until the first cycle with a budget (and after it is turned off)
  double price = 0;  // the error_cost the schedule uses
  struct Cycle {
    uint64_t results, failures;
  };
  std::vector<Cycle> cycles;  // the window's cycles, a ring (next: the oldest)
  size_t next = 0;
  uint64_t window_results = 0, window_failures = 0;
  double observed = 0;  // window_failures / window_results (0 while there are none)
  double target = 0;    // what the last step aimed at (BudgetTarget)
  bool met = true;      // observed <= max_error_rate; true until evidence says otherwise
  // Over the budget and no price meets it: raising it made errors worse (the controller is
  // minimising them) or it is at max_error_cost.
  bool limited = false;
  bool searching = false;     // minimising errors by a search on the price (StepBudget)
  double last_observed = -1;  // the previous step's observed rate (-1: none)
  int direction = 0;          // the last move of the price: +1 up, -1 down, 0 held
  double last_step = 1;       // the last move's factor
  // The search (while `searching`): the price with the lowest window seen and that window's
  // rate (-1: none yet), the factor of its next move (1: holding at the best price) and the
  // side it moves to.
  double best_price = 0;
  // The price and window where the current run of raises began (price 0: no run).
  double raise_from = 0;
  double raise_from_observed = 0;
  double best_observed = -1;
  double search_step = 1;
  int search_dir = -1;
};

// The price's steps per cycle. Raising is the safe direction, so it moves by the whole ratio
// observed / target (the error rate falls roughly as 1 / price on the benchmark's leaking
// backends, docs/algorithm.md section 9), at most doubling; cutting moves by ratio^0.7, so that
// one quiet window does not give the whole margin away, at most a quarter, or an eighth while
// the errors are under a tenth of the target (where ratio^0.7 asks for a fifth or less).
inline constexpr double kBudgetMaxRaise = 2.0;
inline constexpr double kBudgetRaiseGain = 1.0;
inline constexpr double kBudgetMaxCut = 4.0;
inline constexpr double kBudgetFarMaxCut = 8.0;
inline constexpr double kBudgetFarUnder = 0.1;
inline constexpr double kBudgetCutGain = 0.7;
// Where the errors are flat in the price (a cheap failure term, a failing endpoint that already
// has all the traffic the picker would give it), ratio^0.7 crawls: a cut of at least
// kBudgetMeasureStep whose window moved the errors less than the cut predicts measures the
// local elasticity e = d ln(errors) / d ln(1 / price), and the next cut is ratio^(1/e) instead,
// e no lower than kBudgetMinElasticity. One cut's measure sizes only the next cut; small moves
// and windows with few failures measure nothing (their noise is larger than what they move:
// kBudgetMeasureFailures failures have a relative standard error of 16%).
inline constexpr double kBudgetMeasureStep = 1.5;
inline constexpr double kBudgetMeasureFailures = 40;
inline constexpr double kBudgetMinElasticity = 0.25;
// Standard errors of one window's sampling noise kept between the target and the budget.
inline constexpr double kBudgetNoiseZ = 2.5;
// Minimising errors when the budget cannot be met: the search's first step, the smallest raise
// and how much worse the window after it must be for "the raise made it worse", and the step
// below which the search holds at its best price.
inline constexpr double kBudgetSearchStep = 2.0;
inline constexpr double kBudgetSearchMinRaise = 1.2;
inline constexpr double kBudgetWorse = 1.25;
inline constexpr double kBudgetSearchMinStep = 1.15;
// Raises that together doubled the price without lowering the errors by a standard error below
// the window they started from (with kBudgetMeasureFailures failures or more) buy nothing: the
// controller minimises the errors instead, as after a raise that made them worse.
inline constexpr double kBudgetUselessRaise = 2.0;
// While minimising errors the price keeps the failure term of the most failing endpoint at
// least this large (its cost x 5): below it that endpoint takes traffic by its latency alone,
// which is the most errors the picker can make, never the fewest.
inline constexpr double kBudgetSearchMinTerm = 4.0;

// The error rate the controller aims at for a window of `window_results` results: the smaller
// of target_fraction x the budget and the budget less kBudgetNoiseZ standard errors.
double BudgetTarget(const Config::Budget& b, uint64_t window_results);

// The cycles the window spans: window_ms in whole controller cycles, at least one.
uint32_t BudgetWindowCycles(const Config& cfg);

// One cycle. The price starts at picker.error_cost (clamped to the bounds). Returns true when
// `met` changed (an event).
bool StepBudget(const Config& cfg, const BudgetInput& in, BudgetState* s);

// The error_cost the schedule uses under `cfg`: the controller's price while the budget is on,
// picker.error_cost itself while it is off.
double EffectiveErrorCost(const Config& cfg, const BudgetState& s);

}  // namespace weighted
