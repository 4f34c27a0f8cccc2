// The endpoints a schedule draws from, by pick index, as dense arrays: a weighted pick reads the
// entry of the index it drew and nothing else (at 10 000 endpoints, touching the endpoint object
// itself was a cache and TLB miss per pick); a load-aware pick reads the candidates' estimates.
#pragma once

#include <cstdint>
#include <vector>

#include "pick/load_estimate.h"

namespace weighted {

// What a pick hands back of the endpoint it drew: the engine's key and the caller's pointer,
// side by side so that both come from one cache line.
struct RosterEntry {
  uint64_t key;
  void* user;
};

struct Roster {
  uint64_t epoch = 0;                // which endpoint set the indexes refer to
  std::vector<RosterEntry> entries;  // by index
  std::vector<LoadEstimate*> loads;  // by index
};

}  // namespace weighted
