#include "weighted_sim/backend.h"

#include <algorithm>

namespace weighted_sim {

Backend::Backend(const BackendSpec& spec, int index, const std::vector<FaultSpec>* faults,
                 uint64_t seed)
    : spec_(spec),
      index_(index),
      faults_(faults),
      service_rng_(seed, 1000 + 2 * static_cast<uint64_t>(index)),
      error_rng_(seed, 1001 + 2 * static_cast<uint64_t>(index)) {}

Effects Backend::EffectsAt(int64_t now_ns) const {
  return weighted_sim::EffectsAt(*faults_, index_, spec_.base_memory,
                                 static_cast<double>(now_ns) / kNsPerS);
}

double Backend::ServiceMeanMs(int64_t now_ns) const {
  const Effects e = EffectsAt(now_ns);
  return spec_.service.mean_ms / spec_.capacity * e.service_multiplier + StallLeftMs(e, now_ns);
}

double Backend::StallLeftMs(const Effects& e, int64_t now_ns) {
  const double left_s = e.stall_until_s - static_cast<double>(now_ns) / kNsPerS;
  return left_s > 0 ? left_s * 1000.0 : 0.0;
}

double Backend::ErrorRate(int64_t now_ns) const {
  const Effects e = EffectsAt(now_ns);
  if (e.down) return 1.0;
  const double served_ok = (1.0 - spec_.error_rate) * (1.0 - e.error_rate);
  return 1.0 - (1.0 - e.fast_fail_rate) * served_ok;
}

double Backend::SampleServiceMs() {
  const ServiceTime& s = spec_.service;
  if (s.dist == "constant") return s.mean_ms;
  if (s.dist == "exponential") return service_rng_.Exponential(s.mean_ms);
  return service_rng_.LogNormal(s.mean_ms, s.log_sigma);
}

void Backend::AccountBusy(int64_t now_ns) {
  busy_ns_ += static_cast<double>(busy_) * static_cast<double>(now_ns - last_change_ns_);
  last_change_ns_ = now_ns;
}

Backend::Started Backend::Start(uint64_t request, int64_t now_ns) {
  AccountBusy(now_ns);
  ++busy_;
  const Effects e = EffectsAt(now_ns);
  const double ms =
      SampleServiceMs() / spec_.capacity * e.service_multiplier + StallLeftMs(e, now_ns);
  const double p_error = 1.0 - (1.0 - spec_.error_rate) * (1.0 - e.error_rate);
  service_ms_ += ms;
  ++started_;
  Started s;
  s.request = request;
  s.done_ns = now_ns + std::max<int64_t>(1, MsToNs(ms));
  s.error = error_rng_.Bernoulli(p_error);
  return s;
}

Backend::Arrival Backend::Arrive(uint64_t request, int64_t now_ns) {
  const Effects e = EffectsAt(now_ns);
  Arrival a;
  if (e.down) {
    a.admit = Admit::kRefused;  // nothing reaches the server: no worker, not counted by it
    a.answer_ns = now_ns + MsToNs(spec_.connect_error_ms);
    return a;
  }
  if (e.fast_fail_rate > 0 && error_rng_.Bernoulli(e.fast_fail_rate)) {
    a.admit = Admit::kFastFailed;
    a.answer_ns = now_ns + MsToNs(e.fast_fail_ms);
    ++answered_;
    ++failed_;
    return a;
  }
  if (busy_ < spec_.workers) {
    a.admit = Admit::kStarted;
    a.started = Start(request, now_ns);
    ++answered_;
    failed_ += a.started.error ? 1 : 0;
    return a;
  }
  if (queued() < spec_.queue_limit) {
    queue_.push_back(request);
    a.admit = Admit::kQueued;
    return a;
  }
  a.admit = Admit::kRejected;
  a.answer_ns = now_ns + MsToNs(spec_.reject_ms);
  ++answered_;
  ++failed_;
  return a;
}

std::optional<Backend::Started> Backend::Finish(int64_t now_ns) {
  AccountBusy(now_ns);
  --busy_;
  if (queue_.empty()) return std::nullopt;
  const uint64_t next = queue_.front();
  queue_.pop_front();
  Started s = Start(next, now_ns);
  ++answered_;
  failed_ += s.error ? 1 : 0;
  return s;
}

BackendReport Backend::Report(int64_t now_ns) {
  AccountBusy(now_ns);
  const double span_ns = static_cast<double>(std::max<int64_t>(1, now_ns - interval_start_ns_));
  const double span_s = span_ns / kNsPerS;
  const Effects e = EffectsAt(now_ns);
  BackendReport r;
  r.cpu = std::clamp(busy_ns_ / (span_ns * spec_.workers) + e.cpu_extra, 0.0, 1.0);
  r.memory = std::clamp(e.memory, 0.0, 1.0);
  r.qps = static_cast<double>(answered_) / span_s;
  r.eps = static_cast<double>(failed_) / span_s;
  if (started_ > 0) last_latency_ms_ = service_ms_ / static_cast<double>(started_);
  r.latency_ms = last_latency_ms_;
  service_ms_ = 0;
  started_ = 0;
  interval_start_ns_ = now_ns;
  busy_ns_ = 0;
  answered_ = 0;
  failed_ = 0;
  return r;
}

}  // namespace weighted_sim
