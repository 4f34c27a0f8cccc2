// Static weights from discovery metadata, never changed at run time: Spring Cloud
// LoadBalancer's WeightedServiceInstanceListSupplier (integer `weight` metadata, default 1,
// expanded into an interleaved list walked round-robin). The interleaving here is the smooth
// weighted round-robin of nginx, which yields the same spread. With the seed scenario's equal
// capacities the operator's right weights are equal, so this policy equals round-robin there;
// it differs only on heterogeneous fleets.
#include <cmath>

#include "factories.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {
namespace {

class FixedWeights final : public Policy {
 public:
  explicit FixedWeights(const PolicyEnv& env) : current_(env.ids.size(), 0.0) {
    for (double w : env.weights) weights_.push_back(std::max(1.0, std::round(w)));
    for (double w : weights_) total_ += w;
    // Random start position, as the round-robin it builds on.
    const uint64_t skip = Rng(env.seed, 3).Below(static_cast<uint64_t>(total_));
    for (uint64_t i = 0; i < skip; ++i) Next();
  }
  Pick PickBackend(int64_t) override {
    Pick p;
    p.backend = Next();
    return p;
  }
  void OnComplete(const Completion&, int64_t) override {}
  std::vector<double> Weights() const override {
    std::vector<double> w;
    for (double x : weights_) w.push_back(x / total_);
    return w;
  }

 private:
  int Next() {
    size_t best = 0;
    for (size_t i = 0; i < weights_.size(); ++i) {
      current_[i] += weights_[i];
      if (current_[i] > current_[best]) best = i;
    }
    current_[best] -= total_;
    return static_cast<int>(best);
  }

  std::vector<double> weights_;
  std::vector<double> current_;
  double total_ = 0;
};

}  // namespace

std::unique_ptr<Policy> MakeFixedWeights(const PolicyEnv& env) {
  return std::make_unique<FixedWeights>(env);
}

}  // namespace weighted_sim
