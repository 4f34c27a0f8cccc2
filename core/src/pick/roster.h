// The endpoints a schedule draws from, by pick index, as dense arrays: a weighted pick reads the
// key of the index it drew and nothing else (at 10 000 endpoints, touching the endpoint object
// itself was a cache and TLB miss per pick); a load-aware pick reads the candidates' estimates.
#pragma once

#include <cstdint>
#include <vector>

#include "pick/load_estimate.h"

namespace weighted {

struct Roster {
  uint64_t epoch = 0;                // which endpoint set the indexes refer to
  std::vector<uint64_t> keys;        // by index
  std::vector<LoadEstimate*> loads;  // by index
};

}  // namespace weighted
