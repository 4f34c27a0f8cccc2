// Epoch-based reclamation for the lock-free read side. pick() and report() read the service's
// current snapshot (and the endpoints it points to) while the controller may publish a new one;
// the old one is freed only once no reader can still hold it.
//
// Each thread gets its own Reader record per engine (cache-line aligned, found through a
// thread-local cache), so the read side writes only to memory that thread owns: no shared write
// on the pick path (as Envoy's per-worker balancers avoid one; gRPC's refcount is the shared
// write we avoid). The Reader also carries the thread's picker state (pick/random.h) and its
// in-flight stripe, so a pick makes one thread-local lookup for all of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "pick/load_estimate.h"
#include "pick/random.h"

namespace weighted {

class Reclaimer {
 public:
  struct alignas(64) Reader {
    std::atomic<uint64_t> active{0};  // the epoch this reader pinned; 0 = not reading
    PickerRandom random;
    InflightStripe stripe;  // which in-flight stripe this thread writes (pick/load_estimate.h)
    std::atomic<bool> in_use{false};
  };

  // seed 0 draws a random seed; otherwise the n-th thread to use this engine gets a stream
  // derived from (seed, n), so a single-threaded run is reproducible.
  explicit Reclaimer(uint64_t seed);
  ~Reclaimer();
  Reclaimer(const Reclaimer&) = delete;
  Reclaimer& operator=(const Reclaimer&) = delete;

  Reader& ThisThread();

  // Pins the current epoch for one hot-path call. The announcement must be visible before the
  // caller loads the snapshot pointer (a store-load order). A seq_cst store gives it with a
  // full fence on every pick (xchg: ~20 cycles, the largest single cost of a pick); instead the
  // writer side pays: Collect() runs membarrier(2), which acts as a full fence on every thread
  // of the process, before it reads the announcements (the asymmetric fence of liburcu and
  // folly::asymmetric_thread_fence_heavy). Without membarrier the reader falls back to seq_cst.
  class Guard {
   public:
    Guard(Reclaimer& rc, Reader& r) : r_(r) {
      const uint64_t e = rc.epoch_.load(std::memory_order_acquire);
      if (AsymmetricFence()) {
        r_.active.store(e, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // compiler-only barrier
      } else {
        r_.active.store(e, std::memory_order_seq_cst);
      }
    }
    ~Guard() { r_.active.store(0, std::memory_order_release); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    Reader& r_;
  };

  // Frees `fn`'s object once every reader that might have seen it has left. Call after the
  // object was unpublished.
  void Retire(std::function<void()> fn);
  // Runs the frees that are safe now. Writers call it after publishing.
  void Collect();

  // True when the process registered for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED).
  static bool AsymmetricFence() { return asymmetric_fence_; }

 private:
  static bool RegisterAsymmetricFence();
  static void HeavyFence();
  static const bool asymmetric_fence_;

  Reader& Allocate();

  const uint64_t uid_;
  const uint64_t seed_;
  std::atomic<uint64_t> epoch_{1};
  std::mutex mu_;
  std::deque<Reader> readers_;  // deque: stable addresses
  std::vector<std::pair<uint64_t, std::function<void()>>> retired_;
};

}  // namespace weighted
