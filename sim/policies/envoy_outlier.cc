// Envoy's round-robin over the hosts that outlier detection has not ejected, with Envoy's
// defaults (envoy.config.cluster.v3.OutlierDetection; source/common/upstream/
// outlier_detection_impl.cc): consecutive_5xx 5 (enforcing 100%), interval 10 s,
// base_ejection_time 30 s x consecutive ejections (backoff grows per ejection and shrinks per
// healthy interval), max_ejection_time 300 s, max_ejection_percent 10%, success-rate ejection
// with >= 5 hosts of >= 100 requests per interval at mean - 1.9 sigma, failure-percentage and
// gateway-failure ejection off. Timeouts and connection failures count as 5xx
// (split_external_local_origin_errors false). The healthy panic threshold is 50%.
// `always_eject_one_host` (Envoy 1.31+) lets one host go even when 10% of the fleet is < 1.
#include <cmath>

#include "factories.h"
#include "weighted_sim/formulas.h"
#include "weighted_sim/rng.h"
#include "weighted_sim/scenario.h"

namespace weighted_sim {

bool formulas::EnvoyMayEject(int active, int hosts, double max_pct, bool always_one) {
  const double ejected_percent = 100.0 * (active + 1) / hosts;
  return ejected_percent <= max_pct || (always_one && active == 0);
}

int64_t formulas::EnvoyEjectionNs(int64_t base_ns, int backoff, int64_t max_ns) {
  return std::min(base_ns * backoff, std::max(base_ns, max_ns));
}

namespace {

constexpr int kConsecutive5xx = 5;
constexpr int64_t kIntervalNs = 10 * kNsPerS;
constexpr int64_t kBaseEjectionNs = 30 * kNsPerS;
constexpr int64_t kMaxEjectionNs = 300 * kNsPerS;
constexpr double kMaxEjectionPercent = 10;
constexpr int kSuccessRateMinimumHosts = 5;
constexpr int kSuccessRateRequestVolume = 100;
constexpr double kSuccessRateStdevFactor = 1.9;
constexpr double kPanicThresholdPercent = 50;

struct Host {
  int consecutive_5xx = 0;
  bool ejected = false;
  int64_t last_ejection_ns = 0;
  int backoff = 0;
  int64_t interval_total = 0;
  int64_t interval_success = 0;
};

class EnvoyOutlier final : public Policy {
 public:
  EnvoyOutlier(const PolicyEnv& env, bool always_one)
      : hosts_(env.ids.size()), always_one_(always_one), rr_(Rng(env.seed, 8).Below(hosts_.size())) {}

  void AdvanceTo(int64_t now) override {
    while (now >= next_interval_) {
      OnInterval(next_interval_);
      next_interval_ += kIntervalNs;
    }
  }

  Pick PickBackend(int64_t) override {
    std::vector<int> usable;
    for (size_t i = 0; i < hosts_.size(); ++i)
      if (!hosts_[i].ejected) usable.push_back(static_cast<int>(i));
    // Panic: below 50% healthy, balance over every host as if all were healthy.
    if (100.0 * usable.size() / hosts_.size() < kPanicThresholdPercent) {
      usable.clear();
      for (size_t i = 0; i < hosts_.size(); ++i) usable.push_back(static_cast<int>(i));
    }
    Pick p;
    p.backend = usable[rr_++ % usable.size()];
    return p;
  }

  void OnComplete(const Completion& c, int64_t now) override {
    Host& h = hosts_[c.backend];
    ++h.interval_total;
    if (c.outcome == Outcome::kSuccess) {
      ++h.interval_success;
      h.consecutive_5xx = 0;
      return;
    }
    if (++h.consecutive_5xx == kConsecutive5xx) {
      if (!h.ejected) Eject(h, now);
      h.consecutive_5xx = 0;  // Envoy resets so a new bout can be detected
    }
  }

  std::vector<double> Weights() const override {
    std::vector<double> w;
    double n = 0;
    for (const Host& h : hosts_) n += h.ejected ? 0 : 1;
    for (const Host& h : hosts_) w.push_back(h.ejected || n == 0 ? 0.0 : 1.0 / n);
    return w;
  }

 private:
  void Eject(Host& h, int64_t now) {
    if (!formulas::EnvoyMayEject(active_, static_cast<int>(hosts_.size()), kMaxEjectionPercent,
                                 always_one_))
      return;
    h.ejected = true;
    h.last_ejection_ns = now;
    if (h.backoff * kBaseEjectionNs < kMaxEjectionNs + kBaseEjectionNs) ++h.backoff;
    ++active_;
  }

  void OnInterval(int64_t now) {
    for (Host& h : hosts_) {
      if (!h.ejected) {
        if (h.backoff > 0) --h.backoff;
      } else if (formulas::EnvoyEjectionNs(kBaseEjectionNs, h.backoff, kMaxEjectionNs) <=
                 now - h.last_ejection_ns) {
        h.ejected = false;
        h.consecutive_5xx = 0;
        --active_;
      }
    }
    SuccessRateEjections(now);
    for (Host& h : hosts_) h.interval_total = h.interval_success = 0;
  }

  void SuccessRateEjections(int64_t now) {
    std::vector<std::pair<size_t, double>> rates;
    for (size_t i = 0; i < hosts_.size(); ++i) {
      const Host& h = hosts_[i];
      if (h.interval_total >= kSuccessRateRequestVolume)
        rates.emplace_back(i, static_cast<double>(h.interval_success) / h.interval_total);
    }
    if (static_cast<int>(rates.size()) < kSuccessRateMinimumHosts) return;
    double mean = 0;
    for (const auto& r : rates) mean += r.second;
    mean /= rates.size();
    double var = 0;
    for (const auto& r : rates) var += (r.second - mean) * (r.second - mean);
    const double threshold = mean - kSuccessRateStdevFactor * std::sqrt(var / rates.size());
    for (const auto& r : rates)
      if (r.second < threshold && !hosts_[r.first].ejected) Eject(hosts_[r.first], now);
  }

  std::vector<Host> hosts_;
  bool always_one_;
  uint64_t rr_;
  int active_ = 0;
  int64_t next_interval_ = kIntervalNs;
};

}  // namespace

std::unique_ptr<Policy> MakeEnvoyOutlier(const PolicyEnv& env, bool always_eject_one_host) {
  return std::make_unique<EnvoyOutlier>(env, always_eject_one_host);
}

}  // namespace weighted_sim
