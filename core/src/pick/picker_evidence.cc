#include "pick/picker_evidence.h"

namespace weighted {

namespace {
// A cycle whose mean is within this factor of the fleet's is a fast one.
constexpr double kFastCycle = 1.5;

}  // namespace

void ForgetPeak(const Config& cfg, const CycleSample& sample, const ServiceReference& ref,
                LoadEstimate& load) {
  // The picker's peak EWMA keeps a stall's latency for its decay time (10 s: ~20 s before a
  // backend that paused once for 1 s costs what its peers do), and starves it of the picks that
  // would show it is fast again. A whole cycle of answers near the typical latency of the
  // fleet (the lower-median endpoint's mean, as the last cycle judged it), without
  // a failure, is that evidence: the estimate drops to the cycle's mean, as the failure
  // estimates forget after a clean cycle. A backend that stays slow never qualifies (its own
  // unloaded latency would not do: it follows a slow backend up).
  if (cfg.picker.mode != PickMode::kLoadAware || !ref.known || ref.mean_ms <= 0) return;
  // Only a cycle without a failure: a failure may raise the estimate (a fast failure must not
  // look fast), and forgetting that each cycle priced a leaking backend back in (the seed's worst
  // second rose from ~1.0% to ~1.3%).
  uint64_t results = 0;
  for (uint64_t n : sample.outcomes) results += n;
  if (sample.latency_count < cfg.isolation.exit_min_probes ||
      sample.outcomes[WT_OUTCOME_SUCCESS] != results) {
    return;
  }
  const double mean = double(sample.latency_sum_us) / double(sample.latency_count) / 1000.0;
  if (mean > kFastCycle * ref.mean_ms) return;
  if (load.ewma_ms.load(std::memory_order_relaxed) > 2 * mean) {
    load.ewma_ms.store(mean, std::memory_order_relaxed);  // racy like every report's update
  }
}

}  // namespace weighted
