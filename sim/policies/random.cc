// Uniform random choice: Spring Cloud LoadBalancer's RandomLoadBalancer.
#include "factories.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {
namespace {

class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(const PolicyEnv& env) : n_(env.ids.size()), rng_(env.seed, 2) {}
  Pick PickBackend(int64_t) override {
    Pick p;
    p.backend = static_cast<int>(rng_.Below(n_));
    return p;
  }
  void OnComplete(const Completion&, int64_t) override {}
  std::vector<double> Weights() const override { return std::vector<double>(n_, 1.0 / n_); }

 private:
  size_t n_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<Policy> MakeRandom(const PolicyEnv& env) {
  return std::make_unique<RandomPolicy>(env);
}

}  // namespace weighted_sim
