// The reference limit, not a competitor: at each pick it reads the ground truth (each
// backend's true service time and error probability at this instant, and its queue) and sends
// the request to the backend with the least expected delay among those whose true error rate is
// under 1%; when none is, among those with the lowest error rate. Ties break at random.
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
  explicit Oracle(const PolicyEnv& env) : n_(env.ids.size()), truth_(env.truth), rng_(env.seed, 9) {}

  Pick PickBackend(int64_t now) override {
    double best_error = 1.0;
    for (size_t i = 0; i < n_; ++i) best_error = std::min(best_error, truth_->ErrorRate(i, now));
    const double cutoff = best_error < kMaxErrorRate ? kMaxErrorRate : best_error;
    std::vector<int> best;
    double best_delay = INFINITY;
    for (size_t i = 0; i < n_; ++i) {
      const int b = static_cast<int>(i);
      const double e = truth_->ErrorRate(b, now);
      if (!(e < cutoff || e == best_error)) continue;
      const double d = formulas::ExpectedDelayMs(truth_->ServiceMeanMs(b, now),
                                                 truth_->Outstanding(b), truth_->Workers(b));
      if (d < best_delay) {
        best_delay = d;
        best.assign(1, b);
      } else if (d == best_delay) {
        best.push_back(b);
      }
    }
    Pick p;
    p.backend = best[best.size() == 1 ? 0 : rng_.Below(best.size())];
    return p;
  }
  void OnComplete(const Completion&, int64_t) override {}

 private:
  size_t n_;
  const Truth* truth_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<Policy> MakeOracle(const PolicyEnv& env) { return std::make_unique<Oracle>(env); }

}  // namespace weighted_sim
