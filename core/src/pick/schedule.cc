#include "pick/schedule.h"

#include <algorithm>

namespace weighted {

inline double Schedule::Cost(const LoadEstimate& load, double failure_share) const {
  // Finagle's peak-EWMA load, latency x (in-flight + 1), times a failure term: the failure share
  // weighs error_cost latencies, so a fast-failing endpoint does not look cheap (Prequal's
  // sinkholing). An endpoint with no latency history costs nothing while idle and "infinitely"
  // much once it has requests pending, so it is tried but not flooded.
  const double lat = load.ewma_ms.load(std::memory_order_relaxed);
  const int32_t pending = load.InFlight();
  if (lat <= 0) [[unlikely]] return pending > 0 ? 1e300 + pending : 0.0;
  return lat * (pending + 1) * (1 + error_cost * failure_share);
}

uint32_t Schedule::PickByCost(const Roster& roster, PickerRandom& random) const {
  // The stream in a local: the compiler keeps it in registers through the draws, where the
  // caller's reference made it store and reload the state around every one.
  PickerRandom r = random;
  const uint32_t a = main.Sample(r.Next());
  uint32_t b = main.Sample(r.Next());
  // Two distinct candidates (Finagle's P2C): with a repeat, an endpoint that always loses
  // the comparison would still win every pick in which it is drawn twice.
  for (int k = 0; b == a && k < 4; ++k) b = main.Sample(r.Next());
  // Each candidate's failure share once: it enters the cost and the third-candidate test. Each
  // is priced against the other's evidence: a fast estimate no higher than the alternative's,
  // noise allowed for, says nothing that choosing the alternative would avoid.
  const LoadEstimate& la = *roster.loads[a];
  const LoadEstimate& lb = *roster.loads[b];
  // (One division per candidate, as before: the evidence, FailureShare, is the larger of the
  // fast estimate and the steady floor the price starts from.)
  const double sa = la.SteadyFloor(), sb = lb.SteadyFloor();
  const double qa = la.failure_ewma.load(std::memory_order_relaxed);
  const double qb = lb.failure_ewma.load(std::memory_order_relaxed);
  const double ea = std::max(qa, sa), eb = std::max(qb, sb);
  const double fa = PricedFailureShare(sa, qa, fast_weight, eb);
  const double fb = PricedFailureShare(sb, qb, fast_weight, ea);
  const double ca = Cost(la, fa), cb = Cost(lb, fb);
  uint32_t i = cb < ca ? b : a;
  // A failing candidate (its failure term at least doubles its cost) brings a third one: with
  // two candidates, a failing endpoint paired with a slow one hands the slow one the pick
  // whatever its queue, so avoiding the failing endpoint would overload the slow one. The
  // lowest of three costs still weighs load against failures (no lexicographic rule), so
  // when every other endpoint is saturated the failing one still takes its share.
  if (a != b && error_cost * std::max(fa, fb) >= 1) {
    uint32_t c = main.Sample(r.Next());
    for (int k = 0; (c == a || c == b) && k < 4; ++k) c = main.Sample(r.Next());
    if (c != a && c != b) {
      const LoadEstimate& lc = *roster.loads[c];
      // The third is priced against the candidate it would displace.
      const double f = lc.PricedShare(fast_weight, ca <= cb ? ea : eb);
      i = Cost(lc, f) < std::min(ca, cb) ? c : i;
    }
  }
  random = r;
  return i;
}

void Schedule::Pick(const Roster& roster, PickerRandom& random, InflightStripe stripe,
                    wt_pick* out) const {
  uint32_t i;
  uint32_t flags = 0;
  if (panic) {
    i = random.rr++ % static_cast<uint32_t>(roster.entries.size());
    flags = WT_PICK_PANIC;
  } else {
    const uint64_t r = random.Next();
    if (!probes.empty() && ((r & 0xffffffffu) < probe_threshold || main.empty())) {
      i = probes.Sample(random.Next());
      flags = WT_PICK_PROBE;
    } else if (mode == PickMode::kWeighted) {
      i = main.Sample(random.Next());
    } else if ((r >> 32) < keepalive_threshold) {
      // A share of picks follows the weights alone (S-S3): endpoints the cost comparison avoids
      // keep a trickle of traffic, so the controller keeps judging them and sees recovery.
      i = main.Sample(random.Next());
    } else {
      i = PickByCost(roster, random);
    }
  }
  uint32_t ticket = 0;
  if (mode == PickMode::kLoadAware) {
    roster.loads[i]->Take(cycle, stripe);
    flags |= WT_PICK_TRACKED;
    ticket = cycle;
  }
  const RosterEntry& e = roster.entries[i];
  out->flags = flags;
  out->key = e.key;
  out->epoch = roster.epoch;
  out->index = i;
  out->ticket = ticket;
  out->user = e.user;
}

}  // namespace weighted
