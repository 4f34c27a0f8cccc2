// The two peer schedulers the engine is measured against, in the same binary and run
// (a benchmark prints ratios against a baseline measured in the same run, so that a noisy machine moves both). They are
// baselines, not product code: faithful to their sources, no faster and no slower than they are.
#pragma once

#include <cstdint>
#include <mutex>
#include <queue>
#include <vector>

namespace wtbench {

// nginx's smooth weighted round-robin (ngx_http_upstream_get_peer in
// src/http/ngx_http_upstream_round_robin.c): every pick adds each peer's effective weight to its
// current weight, takes the peer with the largest current weight and subtracts the total from it.
// O(n) per pick. nginx guards a shared peer list with a lock (ngx_http_upstream_rr_peers_wlock
// when the upstream has a `zone`); here a std::mutex, shared by every thread.
class SmoothWrr {
 public:
  explicit SmoothWrr(const std::vector<int>& weights) {
    peers_.reserve(weights.size());
    for (int w : weights) peers_.push_back({w, w, 0, 0, 0});
  }

  uint32_t Pick() {
    std::lock_guard lock(mu_);
    Peer* best = nullptr;
    int total = 0;
    for (Peer& p : peers_) {
      p.current_weight += p.effective_weight;
      total += p.effective_weight;
      if (!best || p.current_weight > best->current_weight) best = &p;
    }
    best->current_weight -= total;
    return static_cast<uint32_t>(best - peers_.data());
  }

  // ngx_http_upstream_free_round_robin_peer: the outcome of a finished request, under the lock.
  void Report(uint32_t i, bool failed) {
    std::lock_guard lock(mu_);
    Peer& p = peers_[i];
    if (failed) {
      ++p.fails;
      p.effective_weight -= p.weight / 2;  // nginx: peer->effective_weight -= peer->weight / max_fails
      if (p.effective_weight < 0) p.effective_weight = 0;
    } else {
      ++p.accessed;
      if (p.effective_weight < p.weight) ++p.effective_weight;
    }
  }

 private:
  struct Peer {
    int weight, effective_weight, current_weight;
    uint64_t fails, accessed;
  };
  std::mutex mu_;
  std::vector<Peer> peers_;
};

// Envoy's earliest-deadline-first scheduler (source/common/upstream/edf_scheduler.h): each entry
// has deadline = current_time + 1 / weight; a pick pops the earliest, advances current_time to
// its deadline and pushes it back one period later. O(log n) per pick. Envoy gives every worker
// thread its own load balancer, so the scheduler takes no lock; with two threads each thread
// here has its own instance, as Envoy's workers do.
class EdfScheduler {
 public:
  explicit EdfScheduler(const std::vector<int>& weights) {
    for (uint32_t i = 0; i < weights.size(); ++i) {
      weights_.push_back(weights[i]);
      queue_.push({1.0 / weights[i], order_++, i});
    }
  }

  uint32_t Pick() {
    Entry e = queue_.top();
    queue_.pop();
    current_time_ = e.deadline;
    queue_.push({current_time_ + 1.0 / weights_[e.item], order_++, e.item});
    return e.item;
  }

 private:
  struct Entry {
    double deadline;
    uint64_t order_offset;  // FIFO among equal deadlines, as Envoy's EdfEntry
    uint32_t item;
    bool operator<(const Entry& o) const {  // std::priority_queue is a max-heap: invert
      return deadline == o.deadline ? order_offset > o.order_offset : deadline > o.deadline;
    }
  };
  std::priority_queue<Entry> queue_;
  std::vector<int> weights_;
  double current_time_ = 0;
  uint64_t order_ = 0;
};

}  // namespace wtbench
