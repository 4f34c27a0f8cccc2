// Envoy's LEAST_REQUEST load balancer with its defaults (choice_count 2, active_request_bias
// 1.0). Equal weights: power of two choices, sampled with replacement, the host with fewer
// active requests wins, a tie keeps the first (LeastRequestLoadBalancer::unweightedHostPick).
// Unequal weights: an EDF schedule whose weights are w / (active + 1)^bias, recomputed when a
// host is re-inserted after its pick (source/common/upstream/load_balancer_impl.cc).
#include <cmath>
#include <queue>

#include "factories.h"
#include "weighted_sim/formulas.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {

double formulas::EnvoyLeastRequestWeight(double weight, int active, double bias) {
  if (bias == 1.0) return weight / (active + 1);
  return weight / std::pow(active + 1, bias);
}

namespace {

constexpr uint32_t kChoiceCount = 2;
constexpr double kActiveRequestBias = 1.0;

class LeastRequest final : public Policy {
 public:
  explicit LeastRequest(const PolicyEnv& env)
      : weights_(env.weights), active_(env.ids.size(), 0), rng_(env.seed, 4) {
    for (double w : weights_) equal_ &= w == weights_.front();
    if (!equal_) {
      for (size_t i = 0; i < weights_.size(); ++i) Insert(i, 0.0);
    }
  }

  Pick PickBackend(int64_t) override {
    Pick p;
    p.backend = static_cast<int>(equal_ ? P2C() : Edf());
    ++active_[p.backend];
    return p;
  }
  void OnComplete(const Completion& c, int64_t) override { --active_[c.backend]; }

 private:
  size_t P2C() {
    size_t candidate = rng_.Below(active_.size());
    for (uint32_t i = 1; i < kChoiceCount; ++i) {
      const size_t sampled = rng_.Below(active_.size());
      if (active_[sampled] < active_[candidate]) candidate = sampled;
    }
    return candidate;
  }

  struct Entry {
    double deadline;
    uint64_t order;
    size_t host;
    bool operator>(const Entry& o) const {
      return deadline != o.deadline ? deadline > o.deadline : order > o.order;
    }
  };

  void Insert(size_t host, double now) {
    const double w =
        formulas::EnvoyLeastRequestWeight(weights_[host], active_[host], kActiveRequestBias);
    edf_.push(Entry{now + 1.0 / w, order_++, host});
  }

  size_t Edf() {
    const Entry e = edf_.top();
    edf_.pop();
    Insert(e.host, e.deadline);
    return e.host;
  }

  std::vector<double> weights_;
  std::vector<int> active_;
  bool equal_ = true;
  Rng rng_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> edf_;
  uint64_t order_ = 0;
};

}  // namespace

std::unique_ptr<Policy> MakeLeastRequest(const PolicyEnv& env) {
  return std::make_unique<LeastRequest>(env);
}

}  // namespace weighted_sim
