// Plain round-robin from a random starting position: Spring Cloud LoadBalancer's default
// RoundRobinLoadBalancer (position = random, then incrementAndGet % n) and Envoy's
// RoundRobinLoadBalancer with equal weights.
#include "factories.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {
namespace {

class RoundRobin final : public Policy {
 public:
  explicit RoundRobin(const PolicyEnv& env)
      : n_(env.ids.size()), next_(Rng(env.seed, 1).Below(n_)) {}
  Pick PickBackend(int64_t) override {
    Pick p;
    p.backend = static_cast<int>(next_++ % n_);
    return p;
  }
  void OnComplete(const Completion&, int64_t) override {}
  std::vector<double> Weights() const override { return std::vector<double>(n_, 1.0 / n_); }

 private:
  size_t n_;
  uint64_t next_;
};

}  // namespace

std::unique_ptr<Policy> MakeRoundRobin(const PolicyEnv& env) {
  return std::make_unique<RoundRobin>(env);
}

}  // namespace weighted_sim
