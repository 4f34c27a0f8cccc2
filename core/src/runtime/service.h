// A service: its endpoint set (membership) and the orchestration of its controller cycle. The
// cycle drains each endpoint's hot recorder into its window (stats/), ages the picker's load
// estimates (pick/), judges and steps every endpoint (model/controller.h), plans the scheduling
// weights (model/weights.h), builds the schedule (pick/) and publishes it in a new snapshot.
// Writers (set_endpoints, the controller cycle, exports) serialise on the service's mutex; pick
// and report only forward to the published snapshot and never take it.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "model/budget.h"
#include "model/controller.h"
#include "model/guard.h"
#include "pick/expected_share.h"
#include "runtime/reclaim.h"
#include "runtime/snapshot.h"
#include "util/clock.h"
#include "util/status.h"

namespace weighted {

class Engine;

// The caller's array of endpoint specs: `count` elements `stride` bytes apart, the first
// element's size (weighted.h, "Compatibility"). Elements are read only after the count has
// been checked against the limit.
struct SpecArray {
  const wt_endpoint_spec* base = nullptr;
  size_t stride = sizeof(wt_endpoint_spec);
  size_t count = 0;
  const wt_endpoint_spec& operator[](size_t i) const {
    return *reinterpret_cast<const wt_endpoint_spec*>(reinterpret_cast<const char*>(base) +
                                                      i * stride);
  }
};

// Every hot-path and writer call names the C entry point it serves (`where`), so that a message
// names the function the caller called.
class Service {
 public:
  Service(std::string name, Engine& owner, Reclaimer& reclaimer, const Clock& clock,
          const Config& cfg);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  const std::string& name() const { return name_; }
  Engine& owner() const { return owner_; }

  // ---- writers ----
  // On success writes each spec's key to keys[i] and the new set's epoch to *epoch (either may
  // be null), and takes the specs' user pointers (released through `release`).
  Status SetEndpoints(const char* where, const SpecArray& specs, wt_release_fn release,
                      const Config& cfg, std::vector<PendingEvent>* events, uint64_t* keys,
                      uint64_t* epoch);
  // One controller cycle at `now`: drain, window, evaluate, step, publish.
  void Cycle(const Config& cfg, int64_t now, std::vector<PendingEvent>* events);
  // Rebuilds the snapshot under a new config (reload) without a cycle.
  void Republish(const Config& cfg, std::vector<PendingEvent>* events);

  // ---- hot path (lock-free) ----
  // `pin` (may be null) runs on the picked endpoint's user pointer while the snapshot is held.
  Status Pick(const char* where, wt_pick* out, wt_pin_fn pin, void* ctx);
  // Releases the pick's in-flight count if it was tracked; `record`: records the outcome too.
  Status Finish(const char* where, const wt_pick& pick, double latency_ms, int outcome,
                bool record);
  Status ReportKey(const char* where, uint64_t key, double latency_ms, int outcome);
  Status ReportId(const char* where, std::string_view id, double latency_ms, int outcome);
  // `reports` is an array of `count` elements `stride` bytes apart (the C struct's size).
  Status ReportBatch(const char* where, wt_report* reports, size_t count, size_t stride,
                     size_t* recorded);
  Status ReportResources(const char* where, std::string_view id, uint32_t present,
                         const double (&values)[kResources]);
  // Finish() with the response's load report (`header` empty: none). A malformed report is
  // counted on the endpoint and returned as WT_ERR_BAD_LOAD_REPORT after the pick is finished.
  Status FinishWithLoad(const char* where, const wt_pick& pick, double latency_ms, int outcome,
                        std::string_view header);
  Status ReportLoadKey(const char* where, uint64_t key, std::string_view header);
  // A server's figures from a metric source, for the endpoint with this id if the set has it.
  bool RecordServerById(std::string_view id, uint32_t present,
                        const std::array<double, kResources>& values);
  // A server's error rate (a fraction) from a metric source, likewise.
  bool RecordServerErrorRateById(std::string_view id, double rate);
  // The server's recent service time (ms) as a metric source reported it.
  bool RecordServerLatencyById(std::string_view id, double ms);
  Status KeyOf(const char* where, std::string_view id, uint64_t* key);
  Status IdOf(const char* where, uint64_t key, std::string* id);

  // ---- observation (takes the mutex) ----
  template <typename Fn> void Inspect(Fn&& fn) {
    std::lock_guard lock(mu_);
    fn(*this);
  }
  // Valid inside Inspect():
  const std::vector<Endpoint*>& endpoints() const { return endpoints_; }
  bool panic() const { return panic_; }
  const GuardVerdict& guard() const { return guard_; }
  uint64_t epoch() const { return epoch_; }
  uint64_t stale_reports() const { return stale_reports_.load(std::memory_order_relaxed); }
  uint64_t bad_load_reports() const { return bad_load_reports_.load(std::memory_order_relaxed); }
  uint64_t removed_total(int outcome) const { return removed_totals_[outcome].load(); }
  // The error budget's controller as of the last cycle (on: false while the budget is off).
  const BudgetState& budget() const { return budget_; }
  // The share of picks the published schedule is expected to give each endpoint over the next
  // cycle, by pick index (index i is endpoints()[i]); computed on the first read after a publish.
  const std::vector<double>& expected_shares() { return expected_.Shares(); }
  // Endpoints in this client's subset; 0 when the service has no subset (every endpoint).
  size_t subset_size() const { return subset_size_; }
  // Every rule's verdict on `ep` at the last cycle, as that cycle judged it (its rules and
  // service reference, even if a reload changed the rules since); empty before its first.
  Evaluation EvaluationOf(const Endpoint& ep) const;
  // The same into *out, whose hits keep their capacity (a snapshot explains every endpoint).
  void EvaluateInto(const Endpoint& ep, Evaluation* out) const;

 private:
  struct Guarded;  // a pinned snapshot for the duration of a hot-path call
  // Records into endpoint `id` of the current set, with the clock's now; false if there is none.
  template <typename F>
  bool WithEndpoint(std::string_view id, F&& record);

  void Publish(const Config& cfg, int64_t now, std::vector<PendingEvent>* events);
  // The cycle's step of the error budget's controller; `failures` of `results` this cycle.
  void StepErrorBudget(const Config& cfg, int64_t now, uint64_t results, uint64_t failures,
                       std::vector<PendingEvent>* events);
  // Chooses the subset (runtime/subset.h) and the controls the model judges and plans: the
  // subset's, or every endpoint's without one.
  void ChooseSubset(const Config& cfg);
  // Every report path ends here; always inlined into them (a call and a returned Status cost
  // ~25 instructions per report).
  [[gnu::always_inline]] inline Status Record(Endpoint* ep, double latency_ms, int outcome,
                                              const Snapshot& snap);
  // Parses `header` and records it on `ep` (null: only parses and counts).
  Status RecordLoad(const char* where, Endpoint* ep, std::string_view header,
                    const Snapshot& snap);
  // The check inline (every report pays it), the message out of line. NaN fails both
  // comparisons; max_latency_ms is finite, so an infinity fails the second.
  static bool ValidOutcome(double latency_ms, int outcome, const Snapshot& snap) {
    return latency_ms >= 0 && latency_ms <= snap.max_latency_ms &&
           static_cast<unsigned>(outcome) < static_cast<unsigned>(kOutcomes);
  }
  static Status OutcomeError(const char* where, double latency_ms, int outcome,
                             const Snapshot& snap);
  uint64_t NewKey();

  const std::string name_;
  const uint32_t key_salt_;  // first incarnation of every slot
  Engine& owner_;
  Reclaimer& reclaimer_;
  const Clock& clock_;

  std::mutex mu_;
  std::vector<Endpoint*> endpoints_;  // owned; in the caller's order
  std::vector<ControlState*> controls_;  // endpoints_[i]->ctl
  // What the model judges, steps and plans: the subset's controls (all of controls_ without a
  // subset), and each one's index in endpoints_ (the pick index).
  std::vector<ControlState*> active_;
  std::vector<uint32_t> active_index_;
  size_t subset_size_ = 0;
  CycleSample scratch_;  // an empty sample: endpoints outside the subset age on it
  uint64_t chosen_epoch_ = 0;  // the set and client the subset was last chosen for
  std::string chosen_for_;
  uint64_t chosen_place_ = 0;  // subset.client_count << 32 | client_index it was chosen for
  std::shared_ptr<const Membership> members_;
  std::vector<uint32_t> slot_incarnation_;
  std::vector<uint32_t> free_slots_;
  uint64_t epoch_ = 0;
  uint32_t cycles_ = 0;  // controller cycles run (tracked picks' in-flight counts expire by it)
  bool had_endpoints_ = false;
  bool panic_ = false;
  double fast_weight_ = 1;  // the fast failure estimate's weight in the price (FleetFailures)
  GuardVerdict guard_;      // what the capacity guard saw and did in the last cycle
  Judgement judged_;  // the last cycle's rules and reference (EvaluationOf)
  BudgetState budget_;
  ExpectedShare expected_;  // the prediction for the schedule last published
  // Lifetime outcomes of removed endpoints, added when they are reclaimed: a report racing with
  // the removal still lands on the endpoint, and is counted here once no reader holds it.
  std::array<std::atomic<uint64_t>, kOutcomes> removed_totals_{};

  std::atomic<Snapshot*> snapshot_{nullptr};
  std::atomic<uint64_t> stale_reports_{0};
  std::atomic<uint64_t> bad_load_reports_{0};  // also those for an endpoint not in the set
};

}  // namespace weighted
