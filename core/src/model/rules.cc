#include "model/rules.h"

#include <algorithm>

namespace weighted {

namespace {

double LowerMedian(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + (v.size() - 1) / 2;
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

int ResourceIndex(Metric m) {
  switch (m) {
    case Metric::kCpu: return 0;
    case Metric::kMemory: return 1;
    case Metric::kThreadPool: return 2;
    case Metric::kConnectionPool: return 3;
    default: return -1;
  }
}

// Returns the metric's value, or false when the window has no data for it.
bool MetricValue(Metric m, const WindowStats& s, bool has_requests, double* out) {
  if (const int i = ResourceIndex(m); i >= 0) {
    *out = s.resources[i];
    return s.resource_known[i];
  }
  if (m == Metric::kServerLatency) {
    // The server's figure over every client's requests: no window of this client's needed.
    *out = s.server_latency_ms;
    return s.server_latency_known;
  }
  if ((m == Metric::kErrorRate || m == Metric::kHttp5xxRate) && s.server_error_known) {
    // The server's own rate counts every client's requests, where this client's window may
    // hold a handful (in a fleet of thousands, none). The server sees no timeouts or refused
    // connections, so with a window of its own the client's rate is the floor.
    const double own = m == Metric::kErrorRate ? s.error_rate : s.Rate(WT_OUTCOME_HTTP_5XX);
    *out = has_requests ? std::max(own, s.server_error_rate) : s.server_error_rate;
    return true;
  }
  if (!has_requests) return false;
  if (IsLatencyMetric(m) && s.latency_samples == 0) return false;  // nothing was served
  switch (m) {
    case Metric::kLatencyP99: *out = s.p99_ms; break;
    case Metric::kLatencyP95: *out = s.p95_ms; break;
    case Metric::kLatencyMean: *out = s.mean_ms; break;
    case Metric::kErrorRate: *out = s.error_rate; break;
    case Metric::kHttp5xxRate: *out = s.Rate(WT_OUTCOME_HTTP_5XX); break;
    case Metric::kTimeoutRate: *out = s.Rate(WT_OUTCOME_TIMEOUT); break;
    case Metric::kConnectErrorRate: *out = s.Rate(WT_OUTCOME_CONNECT_ERROR); break;
    case Metric::kBusinessErrorRate: *out = s.Rate(WT_OUTCOME_BUSINESS_ERROR); break;
    default: return false;
  }
  return true;
}

double Reference(Metric m, const ServiceReference& ref) {
  switch (m) {
    case Metric::kLatencyP99: return ref.p99_ms;
    case Metric::kLatencyP95: return ref.p95_ms;
    case Metric::kLatencyMean: return ref.mean_ms;
    default: return 0;
  }
}

}  // namespace

ServiceReference ComputeReference(const std::vector<const WindowStats*>& known,
                                  const std::vector<const WindowStats*>& reporting) {
  ServiceReference ref;
  {
    std::vector<double> v;
    for (const WindowStats* s : reporting) {
      if (s->server_latency_known) v.push_back(s->server_latency_ms);
    }
    ref.server_latency_count = static_cast<uint32_t>(v.size());
    ref.server_latency_ms = LowerMedian(std::move(v));
  }
  std::vector<double> p99, p95, mean;
  for (const WindowStats* s : known) {
    if (s->latency_samples == 0) continue;  // an endpoint that served nothing has no latency
    p99.push_back(s->p99_ms);
    p95.push_back(s->p95_ms);
    mean.push_back(s->mean_ms);
  }
  ref.known = !p99.empty();
  ref.p99_ms = LowerMedian(std::move(p99));
  ref.p95_ms = LowerMedian(std::move(p95));
  ref.mean_ms = LowerMedian(std::move(mean));
  for (int i = 0; i < kResources; ++i) {
    std::vector<double> v;
    for (const WindowStats* s : known) {
      if (s->resource_known[i]) v.push_back(s->resources[i]);
    }
    ref.resource_known[i] = !v.empty();
    ref.resource_count[i] = static_cast<uint32_t>(v.size());
    ref.resources[i] = LowerMedian(std::move(v));
  }
  return ref;
}

// Inlined into Penalty(), which the cycle calls for every endpoint.
[[gnu::always_inline]] inline RuleHit JudgeInline(const Rule& r, const WindowStats& stats,
                                                 bool has_requests, const ServiceReference& ref) {
  RuleHit h{r.metric};
  h.penalty = r.penalty;
  h.evaluated = MetricValue(r.metric, stats, has_requests, &h.value);
  double threshold = r.threshold >= 0 ? r.threshold : 0;
  if (r.metric == Metric::kServerLatency) {
    // As a margin is: judged against the fleet where at least two servers report (and their
    // median is a pace: twice 0 ms would make every other figure slow); alone, by the absolute
    // threshold, or not at all.
    if (r.relative > 0 && ref.server_latency_count >= 2 && ref.server_latency_ms > 0) {
      threshold = std::max(threshold, r.relative * ref.server_latency_ms);
    } else if (r.threshold < 0) {
      h.evaluated = false;
    }
  } else if (r.relative > 0) {
    // A relative rule needs the service reference; without it the rule cannot judge.
    if (!ref.known) h.evaluated = false;
    threshold = std::max(threshold, r.relative * Reference(r.metric, ref));
  }
  if (r.margin >= 0) {
    // Judged against the fleet where there is one: at least two endpoints with a value. Alone
    // (its peers report no such resource, or it has no peers) the endpoint would be compared
    // with itself and never fire, so the absolute threshold judges it by itself.
    const int i = ResourceIndex(r.metric);
    if (i >= 0 && ref.resource_count[i] >= 2) {
      threshold = std::max(threshold, ref.resources[i] + r.margin);
    } else if (r.threshold < 0) {
      h.evaluated = false;
    }
  }
  h.threshold = threshold;
  h.fired = h.evaluated && h.value > threshold;
  if (h.fired && r.full_rate > threshold) {
    // Severity grows with the rate: a flat 0.5 caps an endpoint failing every request at the
    // penalty of one failing 1.1%, below isolation, and leaves it to the picker alone.
    const double k = std::min(1.0, (h.value - threshold) / (r.full_rate - threshold));
    h.penalty = r.penalty + (r.full_penalty - r.penalty) * k;
  }
  return h;
}

RuleHit Judge(const Rule& r, const WindowStats& stats, bool has_requests,
              const ServiceReference& ref) {
  return JudgeInline(r, stats, has_requests, ref);
}

double Penalty(const std::vector<Rule>& rules, const WindowStats& stats, bool has_requests,
               const ServiceReference& ref, double* failing) {
  double penalty = 0, rates = 0;
  for (const Rule& r : rules) {
    const RuleHit h = JudgeInline(r, stats, has_requests, ref);
    if (!h.fired) continue;
    penalty += h.penalty;
    if (IsRateMetric(r.metric)) rates += h.penalty;
  }
  if (failing) *failing = rates;
  return penalty;
}

void Evaluate(const std::vector<Rule>& rules, const WindowStats& stats, bool has_requests,
              const ServiceReference& ref, Evaluation* out) {
  out->penalty = 0;
  out->failing = 0;
  out->hits.clear();
  for (const Rule& r : rules) {
    out->hits.push_back(Judge(r, stats, has_requests, ref));
    const RuleHit& h = out->hits.back();
    if (!h.fired) continue;
    out->penalty += h.penalty;
    if (IsRateMetric(r.metric)) out->failing += h.penalty;
  }
}

}  // namespace weighted
