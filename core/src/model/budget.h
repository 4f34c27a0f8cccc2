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
  double observed = 0;   // window_failures / window_results (0 while there are none)
  bool met = true;       // observed <= max_error_rate; true until evidence says otherwise
  bool limited = false;  // over the budget with the price at max_error_cost: cannot be met
};

// The price's steps per cycle are bounded: up by at most kBudgetMaxRaise, down by at most
// kBudgetMaxCut (raising is the safe direction, so it may move faster).
inline constexpr double kBudgetMaxRaise = 8.0;
inline constexpr double kBudgetMaxCut = 2.0;
// Exponent on observed / target: the error rate falls roughly as 1 / price on the benchmark's
// leaking backends (docs/algorithm.md), so 1 would correct in one step; less damps the noise of
// one window.
inline constexpr double kBudgetGain = 0.7;

// The cycles the window spans: window_ms in whole controller cycles, at least one.
uint32_t BudgetWindowCycles(const Config& cfg);

// One cycle. The price starts at picker.error_cost (clamped to the bounds). Returns true when
// `met` changed (an event).
bool StepBudget(const Config& cfg, const BudgetInput& in, BudgetState* s);

// The error_cost the schedule uses under `cfg`: the controller's price while the budget is on,
// picker.error_cost itself while it is off.
double EffectiveErrorCost(const Config& cfg, const BudgetState& s);

}  // namespace weighted
