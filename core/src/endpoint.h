// One backend endpoint: the part that pick/report touch with atomics (hot) and the part that
// only the controller touches, under its service's mutex (ctl).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "rules.h"
#include "stats.h"

namespace weighted {

enum class State : uint8_t {
  kHealthy,     // no rule fires; weight at (or stepping up to) base
  kDegraded,    // some rules fire; weight cut to base x (1 - penalty)
  kIsolated,    // penalty >= 1: probe traffic only (S-W3, S-S3)
  kRecovering,  // left isolation (or was force-restored); stepping back up
};
const char* StateName(State s);

struct ControlState {
  double base = 1;
  double weight = 1;  // health weight, before slow start and isolation
  double target = 1;
  State state = State::kHealthy;
  bool known = false;  // the window has min_requests results (unknown is not low)
  bool slow_start = false;
  bool judged = false;  // a cycle has evaluated it since it joined
  int64_t last_change_ns = INT64_MIN / 2;  // for the cooldown; "long ago" at creation
  int64_t isolated_since_ns = 0;
  int64_t added_ns = 0;
  uint64_t forced_restores = 0;
  double effective = 1;  // the scheduling weight last published (after slow start, isolation)
  Window window;
  WindowStats stats;     // as of the last cycle
  double penalty = 0;    // as of the last cycle (Service::EvaluationOf explains it)
};

// Field order is for the report path: the key, the load-aware estimates and the hot recorder's
// first fields share the first cache lines (a report at 10 000 endpoints misses on each line
// it touches); the id and the controller's state come after.
struct Endpoint {
  Endpoint(std::string id_, uint64_t key_) : key(key_), id(std::move(id_)) {}

  const uint64_t key;  // (incarnation << 32) | slot; never reused within a service
  // Load-aware mode: tracked picks not yet finished, by the parity of the controller cycle that
  // counted them. Service::Cycle zeroes a parity's count as the cycle after next begins, so a
  // lost pick expires instead of weighing on its endpoint for ever (or until a binding's
  // finalizer runs). Finishing a pick that old changes nothing (Service::Finish).
  std::array<std::atomic<int32_t>, 2> inflight{};
  // Picks in flight; a finish racing with the expiry can leave a count at -1 for a cycle.
  int32_t InFlight() const {
    return std::max(0, inflight[0].load(std::memory_order_relaxed) +
                           inflight[1].load(std::memory_order_relaxed));
  }
  // Load-aware mode: peak EWMA of latency (Finagle). Updated racily on report: a lost update
  // under contention shifts one sample's influence, never corrupts the value.
  std::atomic<double> ewma_ms{0};
  std::atomic<int64_t> ewma_at_ns{0};
  // Load-aware mode: recent failure share, an EWMA over outcomes (alpha 1/16), so a failing
  // endpoint's cost rises within a few requests rather than at the next controller cycle.
  std::atomic<double> failure_ewma{0};
  // Load-aware mode: failure share over the picker's decay time (latency_decay_ms): failures
  // and outcomes, each decayed with exp(-dt / tau); the share is their ratio, taken when read
  // (the 2 KiB per endpoint has no room for a stored copy). Not halved by the cycle, so
  // an endpoint failing a steady share of requests keeps that estimate while it gets few picks;
  // cleared (with failure_ewma) after a cycle whose results were all successes (Service::Cycle).
  std::atomic<double> fail_decayed{0};
  std::atomic<double> outcomes_decayed{0};
  std::atomic<int64_t> fail_at_ns{0};
  HotStats stats;

  const std::string id;
  ControlState ctl;
};

}  // namespace weighted
