#include "runtime/reclaim.h"

#include "util/entropy.h"
#include "util/tls.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <unordered_set>

namespace weighted {

namespace {

// Engines alive now, so that a thread that exits can hand its Reader records back only to
// engines that still exist.
std::mutex g_registry_mu;
std::unordered_set<uint64_t>& LiveEngines() {
  static auto* live = new std::unordered_set<uint64_t>();  // never destroyed: used at thread exit
  return *live;
}
std::atomic<uint64_t> g_next_uid{1};

// Each thread's most recently used (engine uid, Reader) pairs, most recent first. Plain data
// with the initial-exec model (tls.h): the lookup on every pick and report is a %fs-relative load.
struct CacheEntry {
  uint64_t uid;
  Reclaimer::Reader* reader;
};
constexpr int kCacheSize = 8;
WT_TLS_INITIAL_EXEC CacheEntry t_cache[kCacheSize];

void Release(const CacheEntry& e) {
  std::lock_guard lock(g_registry_mu);
  if (e.reader && LiveEngines().count(e.uid)) e.reader->in_use.store(false);
}

// Hands the thread's records back when it exits. Its destructor is what needs a non-trivial
// thread_local, so it lives apart from the cache and is touched only on a cache miss.
struct CacheReleaser {
  bool armed = false;
  ~CacheReleaser() {
    for (const CacheEntry& e : t_cache) Release(e);
  }
};
thread_local CacheReleaser t_releaser;

}  // namespace

const bool Reclaimer::asymmetric_fence_ = Reclaimer::RegisterAsymmetricFence();

bool Reclaimer::RegisterAsymmetricFence() {
  // WT_NO_MEMBARRIER=1 forces the portable path (for comparison and for debugging).
  if (const char* off = std::getenv("WT_NO_MEMBARRIER"); off && *off == '1') return false;
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void Reclaimer::HeavyFence() {
  if (asymmetric_fence_) {
    // Every running thread of the process executes a full fence: a reader's relaxed
    // announcement is visible after this, or that reader loads the snapshot pointer after it
    // and so sees the newly published one. Cannot fail once registered.
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

Reclaimer::Reclaimer(uint64_t seed)
    : uid_(g_next_uid.fetch_add(1)), seed_(seed ? seed : RandomSeed()) {
  std::lock_guard lock(g_registry_mu);
  LiveEngines().insert(uid_);
}

Reclaimer::~Reclaimer() {
  {
    std::lock_guard lock(g_registry_mu);
    LiveEngines().erase(uid_);
  }
  for (auto& [epoch, fn] : retired_) fn();
}

Reclaimer::Reader& Reclaimer::ThisThread() {
  CacheEntry* e = t_cache;
  if (e[0].uid == uid_) return *e[0].reader;
  int i = 1;
  while (i < kCacheSize && e[i].uid != uid_) ++i;
  CacheEntry found;
  if (i < kCacheSize) {
    found = e[i];
  } else {
    t_releaser.armed = true;  // registers the thread-exit release
    i = kCacheSize - 1;
    Release(e[i]);  // evict the least recently used engine's record
    found = {uid_, &Allocate()};
  }
  for (; i > 0; --i) e[i] = e[i - 1];  // move to front
  e[0] = found;
  return *found.reader;
}

Reclaimer::Reader& Reclaimer::Allocate() {
  std::lock_guard lock(mu_);
  for (Reader& r : readers_) {
    if (!r.in_use.load()) {
      r.in_use.store(true);
      return r;
    }
  }
  // A record is used by one live thread at a time (in_use), so the first records own their
  // stripes outright; the rest share the last one.
  const size_t n = readers_.size();
  Reader& r = readers_.emplace_back();
  r.random.Seed(seed_, readers_.size());
  if (n + 1 < kInflightStripes) r.stripe = {static_cast<uint32_t>(n), true};
  r.in_use.store(true);
  return r;
}

void Reclaimer::Retire(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  // Readers that pin an epoch after this increment already see the new publication.
  retired_.emplace_back(epoch_.fetch_add(1, std::memory_order_seq_cst), std::move(fn));
}

void Reclaimer::Collect() {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    if (retired_.empty()) return;
    HeavyFence();  // pairs with Guard's relaxed announcement (see reclaim.h)
    uint64_t oldest = UINT64_MAX;
    for (const Reader& r : readers_) {
      uint64_t a = r.active.load(std::memory_order_seq_cst);
      if (a && a < oldest) oldest = a;
    }
    // An object retired at epoch E may be held by readers that pinned E or earlier.
    auto keep = retired_.begin();
    for (auto it = retired_.begin(); it != retired_.end(); ++it) {
      if (it->first < oldest) ready.push_back(std::move(it->second));
      else *keep++ = std::move(*it);
    }
    retired_.erase(keep, retired_.end());
  }
  for (auto& fn : ready) fn();
}

}  // namespace weighted
