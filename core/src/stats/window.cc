#include "stats/window.h"

#include <algorithm>

#include "stats/quantiles.h"

namespace weighted {

void Window::Resize(size_t slots) {
  // A reload changed the window's length: keep the newest samples that still fit.
  std::vector<CycleSample> next(slots);
  const size_t keep = std::min(count_, slots);
  for (size_t i = 0; i < keep; ++i) next[i] = std::move(ring_[(start_ + count_ - keep + i) % ring_.size()]);
  ring_ = std::move(next);
  start_ = 0;
  count_ = keep;
}

CycleSample& Window::Next(size_t slots) {
  slots = std::max<size_t>(slots, 1);
  if (ring_.size() != slots) Resize(slots);
  size_t i;
  if (count_ < slots) {
    i = (start_ + count_++) % slots;
  } else {
    i = start_;
    start_ = (start_ + 1) % slots;
  }
  ring_[i].Reset();
  return ring_[i];
}

WindowStats Window::Compute(size_t newest) const {
  WindowStats s;
  uint64_t lat_sum = 0, lat_n = 0;
  std::array<double, kResources> rsum{}, ssum{};
  std::array<uint64_t, kResources> rn{}, sn{};
  constexpr size_t kInline = 16;
  const SparseHistogram* inline_parts[kInline];
  std::vector<const SparseHistogram*> heap_parts;
  const SparseHistogram** parts = inline_parts;
  if (count_ > kInline) {
    heap_parts.resize(count_);
    parts = heap_parts.data();
  }
  size_t nparts = 0;
  for (size_t k = count_ > newest ? count_ - newest : 0; k < count_; ++k) {
    const CycleSample& c = At(k);
    for (int i = 0; i < kOutcomes; ++i) s.outcomes[i] += c.outcomes[i];
    lat_sum += c.latency_sum_us;
    lat_n += c.latency_count;
    for (int i = 0; i < kResources; ++i) {
      rsum[i] += c.resource_sum[i];
      rn[i] += c.resource_n[i];
      ssum[i] += c.server_sum[i];
      sn[i] += c.server_n[i];
    }
    if (!c.histogram.empty()) parts[nparts++] = &c.histogram;
  }
  for (uint64_t n : s.outcomes) s.requests += n;
  if (s.requests) s.error_rate = double(s.requests - s.outcomes[WT_OUTCOME_SUCCESS]) / s.requests;
  s.latency_samples = lat_n;
  if (lat_n) s.mean_ms = double(lat_sum) / lat_n / 1000.0;
  // Drain() leaves each part sorted, and the latency count is the parts' record count.
  double q[2];
  if (nparts <= 2) {
    // The default window (two slots): a two-way walk, without the k-way merge's bookkeeping.
    UpperQuantilesOfTwo(nparts > 0 ? parts[0] : nullptr, nparts > 1 ? parts[1] : nullptr, lat_n,
                        &q[0], &q[1]);
  } else {
    static constexpr double kQs[2] = {0.95, 0.99};
    QuantilesOfSorted(parts, nparts, kQs, q, 2, lat_n);
  }
  s.p95_ms = q[0] / 1000.0;
  s.p99_ms = q[1] / 1000.0;
  for (int i = 0; i < kResources; ++i) {
    s.resource_known[i] = rn[i] > 0;
    s.resources[i] = rn[i] ? rsum[i] / rn[i] : 0;
    s.resource_origin[i] = rn[i] ? ResourceOrigin::kClient : ResourceOrigin::kNone;
    s.server_known[i] = sn[i] > 0;
    s.server_resources[i] = sn[i] ? ssum[i] / sn[i] : 0;
  }
  return s;
}

void ResolveResources(ResourceSource prefer, int64_t max_age_ns, int64_t now,
                      const std::array<int64_t, kResources>& server_at, WindowStats* s) {
  for (int i = 0; i < kResources; ++i) {
    // server_at is INT64_MIN when never reported: compare as "now - at", which cannot
    // overflow for a real time, only after checking it was reported at all.
    const bool fresh = s->server_known[i] && server_at[i] != INT64_MIN &&
                       now - server_at[i] <= max_age_ns;
    const bool client = s->resource_origin[i] == ResourceOrigin::kClient;
    const bool use_server = fresh && (prefer == ResourceSource::kServer || !client);
    if (use_server) {
      s->resources[i] = s->server_resources[i];
      s->resource_known[i] = true;
      s->resource_origin[i] = ResourceOrigin::kServer;
    }
  }
}

}  // namespace weighted
