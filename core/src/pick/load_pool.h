// Where a service's load estimates live: side by side in chunks, not inside the endpoint
// objects. A load-aware pick reads two or three random candidates' estimates; inside endpoints
// of several KiB each (the recorder's histogram, the controller's window), at 10 000 endpoints
// every candidate was a cache and TLB miss, and the pick cost ~6x the reference P2C's over its
// dense array. Here 10 000 estimates take 1.25 MiB.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "pick/load_estimate.h"

namespace weighted {

class LoadPool {
 public:
  // A fresh estimate, with a stable address until Release.
  LoadEstimate* Acquire() {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      LoadEstimate* e = free_.back();
      free_.pop_back();
      return e;
    }
    if (chunks_.empty() || used_ == kChunk) {
      chunks_.push_back(std::make_unique<LoadEstimate[]>(kChunk));
      used_ = 0;
    }
    return &chunks_.back()[used_++];
  }
  // Only once no pick or report can still read `e` (the reclaimer's retire callback): it is
  // reset to a new estimate's state and handed to a later endpoint.
  void Release(LoadEstimate* e) {
    e->~LoadEstimate();
    new (e) LoadEstimate();
    std::lock_guard lock(mu_);
    free_.push_back(e);
  }

 private:
  static constexpr size_t kChunk = 256;  // 32 KiB
  std::mutex mu_;  // the reclaimer may run a retire callback outside the service's mutex
  std::vector<std::unique_ptr<LoadEstimate[]>> chunks_;
  size_t used_ = 0;  // of the last chunk
  std::vector<LoadEstimate*> free_;
};

}  // namespace weighted
