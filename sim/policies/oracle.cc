// The reference limit, not a competitor: at each pick it reads the ground truth (each
// backend's true service time and error probability at this instant, and its queue) and sends
// the request to the backend with the least expected delay among those whose true error rate is
// under 1% (the definition docs/benchmark.md gives). One refinement keeps it a limit under open-loop overload:
// a backend whose queue is full (503) or whose expected delay exceeds the client timeout would
// only fail the request, so when every low-error backend is that far behind, the error-prone
// ones are considered too
// (a request there succeeds with probability 1 - e, one sent into the queue with ~0).
// Ties break at random.
#include <algorithm>
#include <cmath>

#include "factories.h"
#include "weighted_sim/formulas.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {

double formulas::ExpectedDelayMs(double service_mean_ms, int outstanding, int workers) {
  // A free worker serves it at once; otherwise it waits for (outstanding - workers + 1)
  // departures, which come every mean / workers on average.
  const double wait = std::max(0, outstanding - workers + 1) * service_mean_ms / workers;
  return wait + service_mean_ms;
}

namespace {

constexpr double kMaxErrorRate = 0.01;

class Oracle final : public Policy {
 public:
  explicit Oracle(const PolicyEnv& env)
      : n_(env.ids.size()), timeout_ms_(env.timeout_ms), truth_(env.truth), rng_(env.seed, 9) {}

  Pick PickBackend(int64_t now) override {
    std::vector<double> error(n_), delay(n_);
    std::vector<bool> room(n_);
    for (size_t i = 0; i < n_; ++i) {
      const int b = static_cast<int>(i);
      error[i] = truth_->ErrorRate(b, now);
      room[i] = truth_->Outstanding(b) < truth_->Workers(b) + truth_->QueueLimit(b);
      delay[i] = formulas::ExpectedDelayMs(truth_->ServiceMeanMs(b, now), truth_->Outstanding(b),
                                           truth_->Workers(b));
    }
    // 1. low error and in time; 2. anything that still answers (error < 1) in time;
    // 3. the lowest error rate, whatever the delay.
    auto low_error = [&](size_t i) { return error[i] < kMaxErrorRate; };
    auto in_time = [&](size_t i) { return room[i] && delay[i] < timeout_ms_; };
    std::vector<int> best = Best(delay, [&](size_t i) { return low_error(i) && in_time(i); });
    if (best.empty()) best = Best(delay, [&](size_t i) { return error[i] < 1.0 && in_time(i); });
    if (best.empty()) {
      const double lowest = *std::min_element(error.begin(), error.end());
      best = Best(delay, [&](size_t i) { return error[i] == lowest; });
    }
    Pick p;
    p.backend = best[best.size() == 1 ? 0 : rng_.Below(best.size())];
    return p;
  }
  void OnComplete(const Completion&, int64_t) override {}

 private:
  template <typename Eligible>
  std::vector<int> Best(const std::vector<double>& delay, Eligible eligible) const {
    std::vector<int> best;
    double best_delay = INFINITY;
    for (size_t i = 0; i < n_; ++i) {
      if (!eligible(i)) continue;
      if (delay[i] < best_delay) {
        best_delay = delay[i];
        best.assign(1, static_cast<int>(i));
      } else if (delay[i] == best_delay) {
        best.push_back(static_cast<int>(i));
      }
    }
    return best;
  }

  size_t n_;
  double timeout_ms_;
  const Truth* truth_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<Policy> MakeOracle(const PolicyEnv& env) { return std::make_unique<Oracle>(env); }

}  // namespace weighted_sim
