// What the load-aware picker knows of one endpoint: requests in flight, a peak-EWMA latency
// (Finagle) and failure shares, kept with plain atomics so that a pick and a report never take a
// lock. Updated on report (Record), aged by the controller once per cycle (NewCycle), read by
// the schedule's cost comparison.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

#include "stats/cycle_sample.h"

namespace weighted {

// In-flight counts are striped: each thread that picks or finishes writes its own stripe, and
// readers (a pick's candidates, the controller, exports) add the stripes up. One shared counter
// per endpoint made every thread take the same cache line twice per request (two locked
// read-modify-writes), which capped two threads on three endpoints at ~1.2x one thread.
inline constexpr uint32_t kInflightStripes = 4;

// Which stripe a thread writes. The first kInflightStripes - 1 threads of an engine each own one
// and update it with a plain load and store (no locked instruction: no other thread writes it);
// every later thread shares the last stripe and updates it with compare-and-swap.
struct InflightStripe {
  uint32_t index = kInflightStripes - 1;
  bool exclusive = false;
};

// exp(-x) for x >= 0 without a libm call: a report ages two estimates, and the hot path makes no
// transcendental call. x = k ln2 + r with |r| <= ln2 / 2, e^-r by its
// Taylor series to the 8th power (truncation error < 3e-10 relative), 2^-k put into the exponent
// bits. Tested against std::exp in tests/cpp/load_estimate_test.cc.
inline double DecayFactor(double x) {
  if (!(x < 700.0)) return x >= 700.0 ? 0.0 : 1.0;  // e^-700 is below any decayed weight; NaN: 1
  if (x <= 0) return 1.0;
  const double y = x * 1.4426950408889634;  // x / ln2
  const int64_t k = static_cast<int64_t>(y + 0.5);
  const double r = (y - double(k)) * 0.6931471805599453;  // |r| <= ln2 / 2
  double p = 1.0 / 40320;
  p = p * r - 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r - 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r - 1.0 / 6;
  p = p * r + 0.5;
  p = p * r - 1.0;
  p = p * r + 1.0;  // e^-r
  return p * std::bit_cast<double>(uint64_t(1023 - k) << 52);  // k <= 1010: a normal power of 2
}

// The fast failure estimate is an EWMA with alpha 1/16 over outcomes: at a failure share q its
// variance is q (1 - q) / 31, the evidence of 31 outcomes.
inline constexpr double kFastOutcomes = 31;
// z^2 of the test below: 3 standard errors, as for the steady share a clean cycle forgets.
inline constexpr double kFastNewsZ2 = 9;

// The failure share the load-aware cost prices for an endpoint with steady share `steady` and
// fast estimate `fast`, against an alternative candidate whose failure evidence is `alt`.
// The fast estimate sees a failure within a few requests, and it is noisy: ~31 outcomes'
// worth of evidence. Its excess over the steady share counts (times `fast_weight`) only where it
// is news against the alternative: above `alt` by more than 3 standard errors of the difference
// of two such estimates at share `alt` (variance 2 alt (1 - alt) / 31). Against a clean
// alternative any failure is news, so a sinkhole or one endpoint's fault is priced within a
// few requests, as ever. When a fault shared by every endpoint begins, no steady share has
// moved yet and the fleet's weight on the fast estimate (FleetFailures) is still the clean
// fleet's 1: two endpoints failing 5% read 0% and 12% by chance, and pricing that herded the
// traffic from one to the next for a controller cycle.
inline double PricedFailureShare(double steady, double fast, double fast_weight, double alt) {
  if (!(fast > steady)) return steady;
  const double news = fast - alt;
  if (!(news > 0) || news * news * kFastOutcomes <= kFastNewsZ2 * 2 * alt * (1 - alt)) {
    return steady;
  }
  return steady + fast_weight * (fast - steady);
}

struct LoadEstimate {
  LoadEstimate() = default;
  ~LoadEstimate() { delete[] more_.load(std::memory_order_relaxed); }
  LoadEstimate(const LoadEstimate&) = delete;
  LoadEstimate& operator=(const LoadEstimate&) = delete;

  // Field order: what a pick reads of a candidate (the estimates, the stripes' mask and the
  // first stripe) comes first and fits one cache line with the endpoint's key (runtime/
  // endpoint.h); the time stamps only a report reads come after.

  // Peak EWMA of latency. Updated racily on report: a lost update under contention shifts one
  // sample's influence, never corrupts the value.
  std::atomic<double> ewma_ms{0};
  // Recent failure share, an EWMA over outcomes (alpha 1/16), so a failing endpoint's cost rises
  // within a few requests rather than at the next controller cycle.
  std::atomic<double> failure_ewma{0};
  // Failure share over the picker's decay time (latency_decay_ms): failures and outcomes, each
  // decayed with exp(-dt / tau); the share is their ratio, taken when read (a stored copy would
  // cost 8 bytes per endpoint for nothing). Not halved by the cycle, so an endpoint failing a
  // steady share of requests keeps that estimate while it gets few picks; cleared (with
  // failure_ewma) after a cycle whose results were all successes (NewCycle).
  std::atomic<double> fail_decayed{0};
  std::atomic<double> outcomes_decayed{0};

 private:
  // A stripe's count for one parity of the cycle, with the cycle that counted it: (cycle << 32)
  // | uint32 count. Expiry is by that stamp, read by the readers, so the controller never writes
  // a stripe (its store would race with an owner's plain read-modify-write and be lost): a count
  // stamped before the previous cycle is worth nothing, and the next Take of that parity
  // restarts it.
  using Cell = std::atomic<uint64_t>;
  struct alignas(64) Stripe {  // a line of its own: each is written by other threads
    std::array<Cell, 2> cells{};
  };
  // The controller's current cycle (NewCycle, Begin), for judging the stamps.
  std::atomic<uint32_t> cycle_{0};
  // Stripes written so far, one bit each: a reader adds up only those (a single-threaded
  // caller's endpoint keeps the one stripe in this line).
  std::atomic<uint32_t> used_{1};
  std::array<Cell, 2> first_{};  // stripe 0

 public:
  std::atomic<int64_t> ewma_at_ns{0};
  std::atomic<int64_t> fail_at_ns{0};
  // The server's own error rate over every client's requests (window.server_error_rate), set by
  // the cycle while it is fresh, 0 otherwise: the floor under the shares this client measured.
  // In a fleet of thousands a client sends an endpoint a request now and then and its own
  // estimates stay near empty; the price should still be what the endpoint fails.
  std::atomic<double> server_failure{0};

  // A new endpoint joins a service in controller cycle `cycle`.
  void Begin(uint32_t cycle) { cycle_.store(cycle, std::memory_order_relaxed); }
  // Picks in flight; a finish racing with the expiry can leave a count at -1 for a cycle.
  int32_t InFlight() const;
  // A tracked pick counted in controller cycle `cycle`, by a thread writing `stripe`.
  void Take(uint32_t cycle, InflightStripe stripe) { Add(stripe, cycle, 1); }
  // Finishes a pick counted in cycle `counted`, now that the service is in cycle `cycle`.
  // Counted in cycle c, the count lives until cycle c + 2 begins; after that it has expired, and
  // taking it off again would eat a newer pick's count. (Unsigned: a wrapped counter still works.)
  void Release(uint32_t counted, uint32_t cycle, InflightStripe stripe) {
    if (cycle - counted <= 1) Add(stripe, counted, -1);
  }
  // One outcome at engine time `now_ns`; `decay_ns` is the picker's time constant. Out of line:
  // inlined, it made the weighted mode's report path too large to inline.
  void Record(double latency_ms, bool failed, int64_t now_ns, double decay_ns);
  // Cycle `cycle` begins with `sample` just drained: the counts of cycle - 2 expire, and the
  // failure estimates age (see the definition). `fleet_steady`: the service's steady failure
  // share (FleetFailures) as the cycle began.
  void NewCycle(uint32_t cycle, const CycleSample& sample, uint64_t clean_results,
                double fleet_steady);
  // The larger of the fast and the steady failure share, in [0, 1]: the evidence shown.
  double FailureShare() const;
  // The steady share, in [0, 1].
  double SteadyShare() const;
  // The share the load-aware cost prices against an alternative whose failure evidence
  // (its FailureShare) is `alt`: the steady share, plus `fast_weight` (in [0, 1]) of what the
  // fast estimate adds above it (FleetFailures::FastWeight) where that is news against the
  // alternative (PricedFailureShare). `alt` 0: against a clean alternative.
  double PricedShare(double fast_weight, double alt = 0) const;
  // The steady share with the server's rate as its floor: what PricedShare starts from.
  double SteadyFloor() const;

 private:
  static uint32_t StampOf(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
  static int32_t CountOf(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
  static uint64_t Pack(uint32_t stamp, int32_t count) {
    return (uint64_t{stamp} << 32) | static_cast<uint32_t>(count);
  }
  // Adds `delta` to the stripe's count for cycle `cycle`. A cell still holding an older cycle's
  // count starts again from 0; one holding a newer cycle's is left alone (for the caller that
  // count has expired).
  void Add(InflightStripe stripe, uint32_t cycle, int32_t delta);
  Stripe* AddStripes();  // the other stripes, allocated on the first use of one

  std::atomic<Stripe*> more_{nullptr};  // kInflightStripes - 1 stripes, or none yet
};

// A service's failure evidence as a cycle sees it, over its endpoints' estimates.
struct FleetFailures {
  double failures = 0, outcomes = 0;  // decayed sums over every endpoint
  double lo = 1, hi = 0;              // lowest and highest steady share among those with evidence
  void Add(const LoadEstimate& e);
  double Steady() const { return outcomes > 0 ? std::min(failures / outcomes, 1.0) : 0.0; }
  // How much the fast estimate counts in the price this cycle. It is what sees a failure within
  // a few requests, and also what is noisy: ~31 outcomes' worth of evidence. When one endpoint
  // fails and the rest do not (or nobody fails yet) its noise is beside the point, so it counts
  // fully; when every endpoint fails alike (a bad dependency behind all of them) the fast
  // estimates differ by noise alone, and pricing that noise herds traffic from one endpoint to
  // the next. So it counts by the spread of the steady shares, ((hi - lo) / hi)^3.
  double FastWeight() const;
};

// Inline: the load-aware pick reads them for two or three candidates, and takes one.

inline void LoadEstimate::Add(InflightStripe stripe, uint32_t cycle, int32_t delta) {
  Cell* cell = &first_[cycle & 1];
  if (stripe.index != 0) [[unlikely]] {
    Stripe* more = more_.load(std::memory_order_acquire);
    if (!more) [[unlikely]] more = AddStripes();
    const uint32_t bit = 1u << stripe.index;
    if (!(used_.load(std::memory_order_relaxed) & bit)) [[unlikely]] {
      used_.fetch_or(bit, std::memory_order_release);  // after the stripes are published
    }
    cell = &more[stripe.index - 1].cells[cycle & 1];
  }
  uint64_t v = cell->load(std::memory_order_relaxed);
  for (;;) {
    const uint32_t stamp = StampOf(v);
    if (stamp != cycle && static_cast<int32_t>(cycle - stamp) < 0) return;  // newer: expired
    const uint64_t next = Pack(cycle, (stamp == cycle ? CountOf(v) : 0) + delta);
    if (stripe.exclusive) {
      cell->store(next, std::memory_order_relaxed);
      return;
    }
    if (cell->compare_exchange_weak(v, next, std::memory_order_relaxed)) return;
  }
}

inline int32_t LoadEstimate::InFlight() const {
  const uint32_t now = cycle_.load(std::memory_order_relaxed);
  auto live = [now](const Cell& c) {
    const uint64_t v = c.load(std::memory_order_relaxed);
    return now - StampOf(v) <= 1 ? CountOf(v) : 0;
  };
  int32_t n = live(first_[0]) + live(first_[1]);
  if (uint32_t more = used_.load(std::memory_order_acquire) >> 1) [[unlikely]] {
    const Stripe* s = more_.load(std::memory_order_acquire);
    for (; more; more &= more - 1) {
      const Stripe& st = s[std::countr_zero(more)];
      n += live(st.cells[0]) + live(st.cells[1]);
    }
  }
  return std::max(0, n);
}

inline double LoadEstimate::SteadyShare() const {
  const double all = outcomes_decayed.load(std::memory_order_relaxed);
  return all > 0 ? std::min(fail_decayed.load(std::memory_order_relaxed) / all, 1.0) : 0.0;
}

inline double LoadEstimate::SteadyFloor() const {
  return std::max(SteadyShare(), server_failure.load(std::memory_order_relaxed));
}

inline double LoadEstimate::PricedShare(double fast_weight, double alt) const {
  return PricedFailureShare(SteadyFloor(), failure_ewma.load(std::memory_order_relaxed),
                            fast_weight, alt);
}

inline double LoadEstimate::FailureShare() const {
  // The larger of the fast estimate (last ~16 outcomes, halved each cycle: reacts within a few
  // requests) and the share over the decay time (steady: a 15%-failing endpoint that gets few
  // picks keeps its 15% instead of drifting back to "healthy" between two of its failures).
  const double all = outcomes_decayed.load(std::memory_order_relaxed);
  const double steady = all > 0 ? fail_decayed.load(std::memory_order_relaxed) / all : 0.0;
  return std::max({failure_ewma.load(std::memory_order_relaxed), std::min(steady, 1.0),
                   server_failure.load(std::memory_order_relaxed)});
}

}  // namespace weighted
