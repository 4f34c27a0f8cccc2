// Power of two choices over peak-EWMA load: Finagle's PeakEwma balancer (the model behind
// linkerd2-proxy's default balancer). Decay time 10 s; two distinct endpoints drawn at random,
// the lower load wins (Finagle's P2C). Latency is observed on every response, failures
// included, exactly as Finagle measures it; no failure accrual (off by default in Linkerd).
#include <cmath>

#include "factories.h"
#include "weighted_sim/formulas.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {

void formulas::PeakEwmaObserve(PeakEwmaState& s, int64_t now_ns, double rtt_ms, double tau_ms) {
  const double td_ms = static_cast<double>(std::max<int64_t>(now_ns - s.stamp_ns, 0)) / 1e6;
  const double w = std::exp(-td_ms / tau_ms);
  if (rtt_ms > s.cost_ms) {
    s.cost_ms = rtt_ms;
  } else {
    s.cost_ms = s.cost_ms * w + rtt_ms * (1.0 - w);
  }
  s.stamp_ns = now_ns;
}

double formulas::PeakEwmaLoad(PeakEwmaState& s, int64_t now_ns, double tau_ms) {
  PeakEwmaObserve(s, now_ns, 0.0, tau_ms);
  if (s.cost_ms == 0.0 && s.pending != 0) return kFinaglePenalty + s.pending;
  return s.cost_ms * (s.pending + 1);
}

namespace {

constexpr double kDecayMs = 10'000;

class PeakEwma final : public Policy {
 public:
  explicit PeakEwma(const PolicyEnv& env) : state_(env.ids.size()), rng_(env.seed, 5) {}

  Pick PickBackend(int64_t now) override {
    const size_t n = state_.size();
    size_t a = rng_.Below(n);
    if (n > 1) {
      size_t b = rng_.Below(n - 1);
      if (b >= a) ++b;
      const double la = formulas::PeakEwmaLoad(state_[a], now, kDecayMs);
      const double lb = formulas::PeakEwmaLoad(state_[b], now, kDecayMs);
      if (lb < la) a = b;
    }
    ++state_[a].pending;
    Pick p;
    p.backend = static_cast<int>(a);
    return p;
  }

  void OnComplete(const Completion& c, int64_t now) override {
    formulas::PeakEwmaState& s = state_[c.backend];
    --s.pending;
    formulas::PeakEwmaObserve(s, now, c.latency_ms, kDecayMs);
  }

  std::vector<double> Weights() const override {
    // Inverse cost, normalised: what share the balancer would give at equal pending.
    std::vector<double> w;
    double sum = 0;
    for (const auto& s : state_) {
      w.push_back(s.cost_ms > 0 ? 1.0 / s.cost_ms : 0.0);
      sum += w.back();
    }
    for (double& x : w) x = sum > 0 ? x / sum : 1.0 / w.size();
    return w;
  }

 private:
  std::vector<formulas::PeakEwmaState> state_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<Policy> MakePeakEwma(const PolicyEnv& env) {
  return std::make_unique<PeakEwma>(env);
}

}  // namespace weighted_sim
