// The core formula of each peer policy, as its project publishes it, separated from the
// policy's bookkeeping so tests can check each one on hand-computed values. Each is defined in
// the policy's own file under sim/policies/.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace weighted_sim::formulas {

// ---- Finagle PeakEwma (finagle-core loadbalancer/PeakEwma.scala) ----
struct PeakEwmaState {
  double cost_ms = 0;  // Finagle starts at 0: "no history"
  int64_t stamp_ns = 0;
  int pending = 0;
};
// observe(rtt): w = exp(-dt / tau); cost = rtt if rtt > cost (peak) else cost w + rtt (1 - w).
void PeakEwmaObserve(PeakEwmaState& s, int64_t now_ns, double rtt_ms, double tau_ms);
// rate(): observe(0) then, without history and with requests pending, Penalty + pending;
// else cost x (pending + 1). Penalty = Long.MaxValue >> 16.
double PeakEwmaLoad(PeakEwmaState& s, int64_t now_ns, double tau_ms);
inline constexpr double kFinaglePenalty = static_cast<double>(INT64_MAX >> 16);

// ---- gRPC weighted_round_robin (gRFC A58, weighted_round_robin.cc, static_stride_scheduler.cc)
// weight = qps / (utilization + eps / qps x error_utilization_penalty); 0 when unusable.
double GrpcWrrWeight(double qps, double eps, double utilization, double penalty);
// StaticStrideScheduler::Make: nullopt (round-robin) unless >= 2 weights are non-zero; zero
// weights take the mean; the max is clamped to 10 x mean and scaled to 65535; every weight
// is clamped to at least max(1, 0.01 x mean).
std::optional<std::vector<uint16_t>> GrpcStrideWeights(const std::vector<float>& weights);
// StaticStrideScheduler::Pick for a sequence number; nullopt means "try the next sequence".
std::optional<size_t> GrpcStridePick(const std::vector<uint16_t>& weights, uint64_t sequence);

// ---- Envoy outlier detection (outlier_detection_impl.cc, DetectorImpl::ejectHost) ----
// Whether one more host may be ejected: (active + 1) / hosts within max_ejection_percent,
// or always_eject_one_host while no host is ejected.
bool EnvoyMayEject(int active_ejections, int hosts, double max_ejection_percent,
                   bool always_eject_one_host);
// Ejection time: base x backoff, capped by max(base, max_ejection_time).
int64_t EnvoyEjectionNs(int64_t base_ns, int backoff, int64_t max_ns);

// ---- Envoy least request with unequal weights: w / (active + 1)^bias ----
double EnvoyLeastRequestWeight(double weight, int active, double bias);

// ---- The oracle: expected delay of one more request at a FIFO backend with `workers`. ----
double ExpectedDelayMs(double service_mean_ms, int outstanding, int workers);

}  // namespace weighted_sim::formulas
