#include "pick/load_estimate.h"

#include "weighted/weighted.h"

namespace weighted {

void LoadEstimate::Record(double latency_ms, bool failed, int64_t now, double decay_ns) {
  // Every estimate here is updated racily (plain loads and stores, no read-modify-write): two
  // reports racing on one endpoint may lose one sample's influence, never corrupt a value, and
  // a report pays no locked instruction for them.
  auto decay_since = [&](std::atomic<int64_t>& at) {
    const double dt = double(now - at.load(std::memory_order_relaxed));
    at.store(now, std::memory_order_relaxed);
    return DecayFactor(std::max(dt, 0.0) / decay_ns);
  };
  const double prev = ewma_ms.load(std::memory_order_relaxed);
  // Peak EWMA (Finagle): a slower sample is taken at once, faster ones decay in with tau. A
  // failure may raise the estimate but never lower it: an endpoint that fails in 1 ms must not
  // look fast and attract traffic (Prequal's "sinkholing").
  if (!failed || prev <= 0 || latency_ms > prev) {
    const double w = decay_since(ewma_at_ns);
    const double next = latency_ms > prev || prev <= 0 ? latency_ms : prev * w + latency_ms * (1 - w);
    ewma_ms.store(std::max(next, 1e-3), std::memory_order_relaxed);
  }
  // Recent failure share over the last ~16 outcomes: reacts within a few requests, where the
  // controller's window reacts within a cycle.
  const double f = failure_ewma.load(std::memory_order_relaxed);
  failure_ewma.store(f + ((failed ? 1.0 : 0.0) - f) / 16.0, std::memory_order_relaxed);
  // Failure share over the decay time: both sums decay alike, so their ratio needs no decay
  // when read, and it stays put while the endpoint gets no picks.
  const double w = decay_since(fail_at_ns);
  const double fails = fail_decayed.load(std::memory_order_relaxed) * w + (failed ? 1 : 0);
  const double all = outcomes_decayed.load(std::memory_order_relaxed) * w + 1;
  fail_decayed.store(fails, std::memory_order_relaxed);
  outcomes_decayed.store(all, std::memory_order_relaxed);
}

LoadEstimate::Stripe* LoadEstimate::AddStripes() {
  auto* fresh = new Stripe[kInflightStripes - 1];
  Stripe* expected = nullptr;
  if (more_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
    return fresh;
  }
  delete[] fresh;  // another thread published them first
  return expected;
}

void LoadEstimate::NewCycle(uint32_t cycle, const CycleSample& sample, uint64_t clean_results,
                            double fleet_steady) {
  // The counts of cycle - 2 expire by their stamps: no stripe is written here.
  cycle_.store(cycle, std::memory_order_relaxed);
  // The fast estimate halves each cycle: an endpoint that lost every pick since it failed gets
  // tried again, and one still failing raises it within a few requests. After a clean cycle
  // with enough evidence (at least `clean_results` results, none failed: what lets an isolated
  // endpoint out) the fast estimate forgets at once, and so does the steady one where it set
  // the endpoint apart from its fleet (3 standard errors above the fleet's share): a recovered
  // endpoint is back within a cycle instead of several decay times; one failing 15% of ~10
  // picks a cycle has such a cycle one time in five and is priced again at its next failure.
  // A steady share like the fleet's only decays: forgetting it at once for the one endpoint
  // whose cycle happened to be clean (the others' last failures landed just after a shared
  // fault ended) would make that endpoint the cheapest by far and herd the traffic onto it.
  failure_ewma.store(failure_ewma.load(std::memory_order_relaxed) * 0.5, std::memory_order_relaxed);
  uint64_t results = 0;
  for (uint64_t n : sample.outcomes) results += n;
  if (results >= clean_results && sample.outcomes[WT_OUTCOME_SUCCESS] == results) {
    failure_ewma.store(0, std::memory_order_relaxed);
    const double all = outcomes_decayed.load(std::memory_order_relaxed);
    const double p = std::max(fleet_steady, 1.0 / 64);
    if (all > 0 && SteadyShare() - fleet_steady > 3 * std::sqrt(p * (1 - p) / all)) {
      fail_decayed.store(0, std::memory_order_relaxed);
    }
  }
}

void FleetFailures::Add(const LoadEstimate& e) {
  const double f = e.fail_decayed.load(std::memory_order_relaxed);
  const double n = e.outcomes_decayed.load(std::memory_order_relaxed);
  failures += f;
  outcomes += n;
  if (n < 10) return;  // too little evidence to say how it compares
  const double share = std::min(f / n, 1.0);
  lo = std::min(lo, share);
  hi = std::max(hi, share);
}

double FleetFailures::FastWeight() const {
  if (hi <= 1e-3) return 1;  // a clean fleet: any failure is news
  const double spread = (hi - std::min(lo, hi)) / hi;
  return spread * spread * spread;
}

}  // namespace weighted
