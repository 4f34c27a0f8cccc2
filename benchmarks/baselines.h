// The peer schedulers the engine is measured against, in the same binary and run
// (a benchmark prints ratios against a baseline measured in the same run, so that a noisy machine moves both). They are
// baselines, not product code: faithful to their sources, no faster and no slower than they are.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
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

// The draws every load-aware baseline shares: wyrand (the engine's generator, pick/random.h), so
// that the comparison is about the balancing and not the random numbers. One per thread.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t Next() {
    state += 0xa0761d6478bd642full;
    __uint128_t m = static_cast<__uint128_t>(state) * (state ^ 0xe7037ed1a0b428dbull);
    return static_cast<uint64_t>(m >> 64) ^ static_cast<uint64_t>(m);
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(((Next() >> 32) * n) >> 32); }
};

// Power of two choices over peak-EWMA load, the formula of Finagle's PeakEwma
// (finagle-core loadbalancer/PeakEwma.scala) and linkerd2-proxy's tower PeakEwma: on a response,
// w = exp(-dt / tau); cost = rtt if rtt > cost, else cost * w + rtt * (1 - w); load = cost x
// (pending + 1), and an endpoint with no history but pending requests gets a huge load. Two
// distinct endpoints drawn at random, the lower load wins. Written tight, as a lower bound of
// what such a balancer costs: pending counts are the shared atomics both projects use, the
// estimate is stored with relaxed atomics (both projects take a lock for it) and is not decayed
// again when read (Finagle's get() and tower's load() do: one exp() per candidate more). All
// threads share the endpoints, as a JVM's request threads share a client's balancer.
class P2cPeakEwma {
 public:
  P2cPeakEwma(size_t n, double tau_ns) : hosts_(new Host[n]), n_(n), tau_ns_(tau_ns) {}

  uint32_t Pick(Rng& rng) {
    const uint32_t a = rng.Below(uint32_t(n_));
    uint32_t b = rng.Below(uint32_t(n_ - 1));
    b += b >= a;  // distinct
    const uint32_t i = Load(hosts_[b]) < Load(hosts_[a]) ? b : a;
    hosts_[i].pending.fetch_add(1, std::memory_order_relaxed);
    return i;
  }

  void Report(uint32_t i, double rtt_ms, int64_t now_ns) {
    Host& h = hosts_[i];
    h.pending.fetch_sub(1, std::memory_order_relaxed);
    const double td = double(std::max<int64_t>(now_ns - h.stamp.load(std::memory_order_relaxed), 0));
    const double w = std::exp(-td / tau_ns_);
    const double cost = h.cost.load(std::memory_order_relaxed);
    h.cost.store(rtt_ms > cost ? rtt_ms : cost * w + rtt_ms * (1 - w), std::memory_order_relaxed);
    h.stamp.store(now_ns, std::memory_order_relaxed);
  }

 private:
  struct Host {
    std::atomic<int32_t> pending{0};
    std::atomic<double> cost{0};
    std::atomic<int64_t> stamp{0};
  };
  static double Load(const Host& h) {
    const double cost = h.cost.load(std::memory_order_relaxed);
    const int32_t pending = h.pending.load(std::memory_order_relaxed);
    if (cost == 0 && pending != 0) return 1e300 + pending;  // Finagle: Penalty + pending
    return cost * (pending + 1);
  }
  std::unique_ptr<Host[]> hosts_;
  size_t n_;
  double tau_ns_;
};

// Envoy's least-request balancer (source/extensions/load_balancing_policies/least_request and
// common/load_balancer_impl.cc) with unequal weights, its path for the benchmark's weights 1..10:
// an EDF scheduler per worker whose entry weights are recomputed when a host is picked and put
// back, weight / (active_requests + 1)^active_request_bias (bias 1.0, the default: a division).
// The active-request gauge (host->stats().rq_active_) is one atomic per host shared by all
// workers; a finished request decrements it and bumps the host's success or error counter.
class EnvoyLeastRequest {
 public:
  struct HostStats {
    std::atomic<int64_t> rq_active{0};
    std::atomic<uint64_t> rq_success{0}, rq_error{0};
  };
  EnvoyLeastRequest(const std::vector<int>& weights, HostStats* stats)
      : weights_(weights), stats_(stats) {
    for (uint32_t i = 0; i < weights.size(); ++i) queue_.push({1.0 / Weight(i), order_++, i});
  }

  uint32_t Pick() {
    const Entry e = queue_.top();
    queue_.pop();
    current_time_ = e.deadline;
    stats_[e.item].rq_active.fetch_add(1, std::memory_order_relaxed);
    queue_.push({current_time_ + 1.0 / Weight(e.item), order_++, e.item});
    return e.item;
  }
  void Report(uint32_t i, bool failed) {
    stats_[i].rq_active.fetch_sub(1, std::memory_order_relaxed);
    (failed ? stats_[i].rq_error : stats_[i].rq_success).fetch_add(1, std::memory_order_relaxed);
  }

 private:
  double Weight(uint32_t i) const {
    return double(weights_[i]) / double(stats_[i].rq_active.load(std::memory_order_relaxed) + 1);
  }
  struct Entry {
    double deadline;
    uint64_t order_offset;
    uint32_t item;
    bool operator<(const Entry& o) const {
      return deadline == o.deadline ? order_offset > o.order_offset : deadline > o.deadline;
    }
  };
  std::priority_queue<Entry> queue_;
  std::vector<int> weights_;
  HostStats* stats_;
  double current_time_ = 0;
  uint64_t order_ = 0;
};

}  // namespace wtbench
