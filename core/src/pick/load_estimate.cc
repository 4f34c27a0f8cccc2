#include "pick/load_estimate.h"

#include "weighted/weighted.h"

namespace weighted {

void LoadEstimate::NewCycle(uint32_t cycle, const CycleSample& sample, uint64_t clean_results) {
  inflight[cycle & 1].store(0, std::memory_order_relaxed);
  // The fast estimate halves each cycle: an endpoint that lost every pick since it failed gets
  // tried again, and one still failing raises it within a few requests. Both forget at once
  // after a clean cycle with enough evidence (at least `clean_results` results, none failed:
  // what lets an isolated endpoint out), so a recovered endpoint is back within a cycle instead
  // of several decay times; one failing 15% of ~10 picks a cycle has such a cycle one time in
  // five and is priced again at its next failure.
  failure_ewma.store(failure_ewma.load(std::memory_order_relaxed) * 0.5, std::memory_order_relaxed);
  uint64_t results = 0;
  for (uint64_t n : sample.outcomes) results += n;
  if (results >= clean_results && sample.outcomes[WT_OUTCOME_SUCCESS] == results) {
    failure_ewma.store(0, std::memory_order_relaxed);
    fail_decayed.store(0, std::memory_order_relaxed);
  }
}

}  // namespace weighted
