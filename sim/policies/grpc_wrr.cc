// gRPC's weighted_round_robin LB policy (gRFC A58; grpc src/core/load_balancing/
// weighted_round_robin/) with its defaults: per-call ORCA load reports carried on responses,
// weight = qps / (utilization + eps / qps x error_utilization_penalty 1.0), blackout_period
// 10 s, weight_expiration_period 3 min, weight_update_period 1 s, and the StaticStrideScheduler
// (weights scaled to uint16, clamped to [0.01, 10] x mean, unknown = mean; all unknown = plain
// round-robin). Utilization is the backend's cpu_utilization (no application_utilization set).
#include <algorithm>
#include <cmath>
#include <limits>

#include "factories.h"
#include "weighted_sim/formulas.h"
#include "weighted_sim/rng.h"
#include "weighted_sim/scenario.h"

namespace weighted_sim {

namespace {
constexpr uint16_t kMaxWeight = std::numeric_limits<uint16_t>::max();
constexpr double kMaxRatio = 10;
constexpr double kMinRatio = 0.01;
}  // namespace

double formulas::GrpcWrrWeight(double qps, double eps, double utilization, double penalty) {
  if (!(qps > 0 && utilization > 0)) return 0;
  double p = 0;
  if (eps > 0 && penalty > 0) p = eps / qps * penalty;
  return qps / (utilization + p);
}

std::optional<std::vector<uint16_t>> formulas::GrpcStrideWeights(const std::vector<float>& w) {
  const size_t n = w.size();
  if (n <= 1) return std::nullopt;
  size_t zeros = 0;
  double sum = 0;
  float unscaled_max = 0;
  for (float x : w) {
    sum += x;
    unscaled_max = std::max(unscaled_max, x);
    zeros += x == 0 ? 1 : 0;
  }
  if (zeros == n) return std::nullopt;
  const double unscaled_mean = sum / static_cast<double>(n - zeros);
  if (unscaled_max / unscaled_mean > kMaxRatio) unscaled_max = static_cast<float>(kMaxRatio * unscaled_mean);
  const double scale = kMaxWeight / unscaled_max;
  const auto mean = static_cast<uint16_t>(std::lround(scale * unscaled_mean));
  const auto lower = std::max<uint16_t>(1, static_cast<uint16_t>(std::lround(mean * kMinRatio)));
  std::vector<uint16_t> out;
  for (float x : w) {
    if (x == 0) {
      out.push_back(mean);
    } else {
      const auto s = static_cast<uint16_t>(std::lround(std::min(x, unscaled_max) * scale));
      out.push_back(std::max(s, lower));
    }
  }
  return out;
}

std::optional<size_t> formulas::GrpcStridePick(const std::vector<uint16_t>& w, uint64_t seq32) {
  const uint32_t sequence = static_cast<uint32_t>(seq32);
  const uint64_t index = sequence % w.size();
  const uint64_t generation = sequence / w.size();
  const uint64_t weight = w[index];
  const uint16_t offset = kMaxWeight / 2;
  const auto mod = static_cast<uint16_t>((weight * generation + index * offset) % kMaxWeight);
  if (mod < kMaxWeight - weight) return std::nullopt;
  return index;
}

namespace {

constexpr double kErrorUtilizationPenalty = 1.0;
constexpr int64_t kBlackoutNs = 10 * kNsPerS;
constexpr int64_t kExpirationNs = 180 * kNsPerS;
constexpr int64_t kUpdatePeriodNs = 1 * kNsPerS;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct EndpointWeight {
  double weight = 0;
  int64_t non_empty_since = kNever;
  int64_t last_update = kNever;

  void MaybeUpdate(double qps, double eps, double util, int64_t now) {
    const double w = formulas::GrpcWrrWeight(qps, eps, util, kErrorUtilizationPenalty);
    if (w == 0) return;  // gRPC ignores an unusable report
    if (non_empty_since == kNever) non_empty_since = now;
    last_update = now;
    weight = w;
  }
  double Get(int64_t now) {
    if (last_update == kNever) return 0;
    if (now - last_update >= kExpirationNs) {
      non_empty_since = kNever;  // must sit out a new blackout when reports resume
      return 0;
    }
    if (now - non_empty_since < kBlackoutNs) return 0;
    return weight;
  }
};

class GrpcWrr final : public Policy {
 public:
  explicit GrpcWrr(const PolicyEnv& env) : endpoints_(env.ids.size()) {
    Rng rng(env.seed, 6);
    sequence_ = static_cast<uint32_t>(rng.Next());
    rr_next_ = rng.Below(endpoints_.size());
  }

  void AdvanceTo(int64_t now) override {
    while (now >= next_update_) {
      Rebuild(next_update_);
      next_update_ += kUpdatePeriodNs;
    }
  }

  Pick PickBackend(int64_t) override {
    Pick p;
    if (!scheduler_) {
      p.backend = static_cast<int>(rr_next_++ % endpoints_.size());
      return p;
    }
    while (true) {
      if (auto i = formulas::GrpcStridePick(*scheduler_, sequence_++)) {
        p.backend = static_cast<int>(*i);
        return p;
      }
    }
  }

  void OnComplete(const Completion& c, int64_t now) override {
    if (c.trailer == nullptr) return;  // no response, no load report
    endpoints_[c.backend].MaybeUpdate(c.trailer->qps, c.trailer->eps, c.trailer->cpu, now);
  }

  std::vector<double> Weights() const override {
    std::vector<double> w(endpoints_.size(), 1.0 / endpoints_.size());
    if (!scheduler_) return w;
    double sum = 0;
    for (uint16_t x : *scheduler_) sum += x;
    for (size_t i = 0; i < w.size(); ++i) w[i] = (*scheduler_)[i] / sum;
    return w;
  }

 private:
  void Rebuild(int64_t now) {
    std::vector<float> w;
    for (EndpointWeight& e : endpoints_) w.push_back(static_cast<float>(e.Get(now)));
    scheduler_ = formulas::GrpcStrideWeights(w);
  }

  std::vector<EndpointWeight> endpoints_;
  std::optional<std::vector<uint16_t>> scheduler_;
  uint32_t sequence_ = 0;
  uint64_t rr_next_ = 0;
  int64_t next_update_ = 0;
};

}  // namespace

std::unique_ptr<Policy> MakeGrpcWrr(const PolicyEnv& env) {
  return std::make_unique<GrpcWrr>(env);
}

}  // namespace weighted_sim
