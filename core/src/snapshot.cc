#include "snapshot.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weighted {

void AliasTable::Build(const std::vector<uint32_t>& items, const std::vector<double>& weights) {
  const size_t n = items.size();
  columns_.assign(n, Column{});
  if (n == 0) return;
  double sum = 0;
  for (double w : weights) sum += w;
  // Vose's method: scaled probabilities, split into columns below and above the mean.
  std::vector<double> p(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    p[i] = weights[i] * n / sum;
    (p[i] < 1 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  constexpr double kScale = 4294967296.0;  // 2^32
  constexpr uint32_t kFull = 0xffffffffu;   // with alias == item: always the column's own item
  while (!small.empty() && !large.empty()) {
    uint32_t s = small.back(), l = large.back();
    small.pop_back();
    large.pop_back();
    columns_[s] = {static_cast<uint32_t>(std::min<long long>(std::llround(p[s] * kScale), kFull)),
                   items[s], items[l]};
    p[l] = (p[l] + p[s]) - 1;
    (p[l] < 1 ? small : large).push_back(l);
  }
  // Whatever remains is 1 up to rounding.
  for (uint32_t i : large) columns_[i] = {kFull, items[i], items[i]};
  for (uint32_t i : small) columns_[i] = {kFull, items[i], items[i]};
}

double Snapshot::FailureShare(uint32_t i) const {
  // The larger of the fast estimate (last ~16 outcomes, halved each cycle: reacts within a few
  // requests) and the share over the decay time (steady: a 15%-failing endpoint that gets few
  // picks keeps its 15% instead of drifting back to "healthy" between two of its failures).
  const Endpoint* ep = members->endpoints[i];
  const double all = ep->outcomes_decayed.load(std::memory_order_relaxed);
  const double steady = all > 0 ? ep->fail_decayed.load(std::memory_order_relaxed) / all : 0.0;
  return std::max(ep->failure_ewma.load(std::memory_order_relaxed), std::min(steady, 1.0));
}

double Snapshot::Cost(uint32_t i, double failure_share) const {
  // Finagle's peak-EWMA load, latency x (in-flight + 1), times a failure term: the failure share
  // weighs error_cost latencies, so a fast-failing endpoint does not look cheap (Prequal's
  // sinkholing). An endpoint with no latency history costs nothing while idle and "infinitely"
  // much once it has requests pending, so it is tried but not flooded.
  const Endpoint* ep = members->endpoints[i];
  const double lat = ep->ewma_ms.load(std::memory_order_relaxed);
  const int32_t pending = ep->InFlight();
  if (lat <= 0) return pending > 0 ? 1e300 + pending : 0.0;
  return lat * (pending + 1) * (1 + error_cost * failure_share);
}

void Snapshot::Pick(Reclaimer::Reader& reader, wt_pick* out) const {
  uint32_t i;
  uint32_t flags = 0;
  if (panic) {
    i = reader.rr++ % static_cast<uint32_t>(members->endpoints.size());
    flags = WT_PICK_PANIC;
  } else {
    const uint64_t r = reader.Next();
    if (!probes.empty() && ((r & 0xffffffffu) < probe_threshold || main.empty())) {
      i = probes.Sample(reader.Next());
      flags = WT_PICK_PROBE;
    } else if (mode == PickMode::kWeighted) {
      i = main.Sample(reader.Next());
    } else if ((r >> 32) < keepalive_threshold) {
      // A share of picks follows the weights alone (S-S3): endpoints the cost comparison avoids
      // keep a trickle of traffic, so the controller keeps judging them and sees recovery.
      i = main.Sample(reader.Next());
    } else {
      const uint32_t a = main.Sample(reader.Next());
      uint32_t b = main.Sample(reader.Next());
      // Two distinct candidates (Finagle's P2C): with a repeat, an endpoint that always loses
      // the comparison would still win every pick in which it is drawn twice.
      for (int k = 0; b == a && k < 4; ++k) b = main.Sample(reader.Next());
      // Each candidate's failure share once: it enters the cost and the third-candidate test.
      const double fa = FailureShare(a), fb = FailureShare(b);
      const double ca = Cost(a, fa), cb = Cost(b, fb);
      i = cb < ca ? b : a;
      // A failing candidate (its failure term at least doubles its cost) brings a third one: with
      // two candidates, a failing endpoint paired with a slow one hands the slow one the pick
      // whatever its queue, so avoiding the failing endpoint would overload the slow one. The
      // lowest of three costs still weighs load against failures (no lexicographic rule), so
      // when every other endpoint is saturated the failing one still takes its share.
      if (a != b && error_cost * std::max(fa, fb) >= 1) {
        uint32_t c = main.Sample(reader.Next());
        for (int k = 0; (c == a || c == b) && k < 4; ++k) c = main.Sample(reader.Next());
        if (c != a && c != b && Cost(c, FailureShare(c)) < std::min(ca, cb)) i = c;
      }
    }
  }
  if (mode == PickMode::kLoadAware) {
    members->endpoints[i]->inflight[cycle & 1].fetch_add(1, std::memory_order_relaxed);
    flags |= WT_PICK_TRACKED | (cycle << kPickCycleShift);  // the cycle's low byte
  }
  // The key comes from the dense keys array: a weighted pick touches no Endpoint object (at
  // 10 000 endpoints that was a cache and TLB miss per pick).
  out->key = members->keys[i];
  out->epoch = members->epoch;
  out->index = i;
  out->flags = flags;
}

}  // namespace weighted
