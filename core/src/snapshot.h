// What pick() reads: an immutable picture of a service's endpoints and their scheduling
// weights, built off the request path and published with one atomic pointer store
// (CONVENTIONS: gRPC's StaticStrideScheduler, Envoy's EDF). A pick costs one random draw from
// an alias table: exact in expectation, O(1), no first-pick bias, no shared write.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config.h"
#include "endpoint.h"
#include "reclaim.h"

namespace weighted {

// Walker/Vose alias table over items with positive weights.
class AliasTable {
 public:
  // `items[i]` is drawn with probability weights[i] / sum(weights); weights must be > 0.
  void Build(const std::vector<uint32_t>& items, const std::vector<double>& weights);
  bool empty() const { return columns_.empty(); }
  uint32_t Sample(uint64_t r) const {
    // High 32 bits choose the column (Lemire's multiply-shift), low 32 bits the coin. One
    // 12-byte column per draw: at 10 000 endpoints the table (120 KB) stays in L2.
    const Column& c = columns_[((r >> 32) * columns_.size()) >> 32];
    return static_cast<uint32_t>(r) < c.prob ? c.item : c.alias;
  }

 private:
  struct Column {
    uint32_t prob;   // P(own item) scaled to 2^32; a full column has 2^32 - 1 and alias == item
    uint32_t item;
    uint32_t alias;  // the item drawn when the coin is >= prob
  };
  std::vector<Column> columns_;
};

// The endpoint set; changes only with set_endpoints, so snapshots share it across cycles.
struct Membership {
  uint64_t epoch = 0;                 // which set_endpoints call `endpoints` mirrors
  std::vector<Endpoint*> endpoints;   // by index (the caller's order)
  std::vector<uint64_t> keys;         // endpoints[i]->key: a pick reads these, not the endpoint
  std::vector<Endpoint*> by_slot;     // by key slot, for report()
  std::unordered_map<std::string_view, Endpoint*> by_id;

  // Looks a key up; nullptr if the endpoint is not (or no longer) in this set.
  Endpoint* Find(uint64_t key) const {
    const uint64_t slot = key & 0xffffffffu;
    Endpoint* ep = slot < by_slot.size() ? by_slot[slot] : nullptr;
    return ep && ep->key == key ? ep : nullptr;
  }
  Endpoint* Find(std::string_view id) const {
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : it->second;
  }
};

// Where a tracked pick's flags carry the low byte of the cycle that counted it.
inline constexpr int kPickCycleShift = 24;
static_assert(WT_PICK_ENGINE_BITS == 0xffu << kPickCycleShift);

struct Snapshot {
  std::shared_ptr<const Membership> members;
  AliasTable main;                    // endpoints in rotation, by effective weight
  AliasTable probes;                  // half-isolated endpoints (S-W3, S-S3)
  uint64_t probe_threshold = 0;       // P(a pick is a probe), scaled to 2^32
  bool panic = false;                 // S-S2: plain round-robin over all endpoints
  PickMode mode = PickMode::kWeighted;
  double max_latency_ms = 0;          // reports above are rejected as absurd
  double latency_decay_ns = 0;        // load-aware EWMA time constant
  double error_cost = 0;              // load-aware cost per unit of recent failure share
  uint64_t keepalive_threshold = 0;   // load-aware: P(pick by weight alone), scaled to 2^32
  uint32_t cycle = 0;                 // the service's controller cycles so far (Endpoint::inflight)

  // Chooses an endpoint for one request. Requires a non-empty snapshot.
  void Pick(Reclaimer::Reader& reader, wt_pick* out) const;

 private:
  double FailureShare(uint32_t i) const;  // load-aware failure estimate of endpoints[i]
  double Cost(uint32_t i, double failure_share) const;  // load-aware cost of endpoints[i]
};

}  // namespace weighted
