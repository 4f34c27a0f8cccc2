#include "runtime/service.h"
#include "runtime/service_guard.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "pick/picker_evidence.h"
#include "model/rules.h"
#include "model/weights.h"
#include "util/quoted.h"
#include "util/utf8.h"

namespace weighted {

namespace {

constexpr size_t kMaxIdBytes = 256;
constexpr double kMaxBaseWeight = 1e9;

// From the name, not at random: the same calls give the same keys (the manual clock's promise).
uint32_t KeySalt(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// An endpoint the server_latency rule judges slow is priced by the load-aware picker at its
// server's figure at least, as the server's error rate is the floor under the failure share it
// prices. In a fleet of thousands a client hears from an endpoint every few windows: its peak
// EWMA of a backend that has slowed is the one from before, and the cost comparison keeps
// choosing it (docs/benchmark.md, "A fleet of engines": 37 s to drain a 5x slow backend to a
// quarter at 10,000 clients). Only where the rule fires: every client reads the same server
// figures, and pricing their noise made the whole fleet follow the lowest (max/mean load 1.28
// against 1.07). The server's figure leaves the network out, so a client's own slower estimate
// stands; a floor the last cycle wrote follows the server, down to its figure once the rule
// no longer fires, and one the client's own answers moved since is theirs to decay.
void FloorLatency(const WindowStats& s, bool slow, Endpoint& ep) {
  const double was = ep.server_latency_floor;
  ep.server_latency_floor = 0;
  if (!s.server_latency_known) return;  // stale: the estimate is the client's from here
  const double server = std::max(s.server_latency_ms, 1e-3);  // Record's lowest estimate
  const double ewma = ep.load.ewma_ms.load(std::memory_order_relaxed);
  const bool ours = was > 0 && ewma == was;
  if (!ours && !(slow && ewma < server)) return;
  ep.load.ewma_ms.store(server, std::memory_order_relaxed);  // racy like every report's update
  if (slow) ep.server_latency_floor = server;
}

bool JudgedSlowByServer(const Config& cfg, const ServiceReference& ref, const ControlState& c) {
  for (const Rule& r : cfg.rules) {
    if (r.metric == Metric::kServerLatency && Judge(r, c.stats, true, ref).fired) return true;
  }
  return false;
}
}  // namespace

Service::Service(std::string name, Engine& owner, Reclaimer& reclaimer, const Clock& clock,
                 const Config& cfg)
    : name_(std::move(name)), key_salt_(KeySalt(name_)), owner_(owner), reclaimer_(reclaimer),
      clock_(clock) {
  // Hot paths always find a snapshot, if an empty one.
  std::vector<PendingEvent> none;
  Publish(cfg, clock_.NowNs(), &none);
}

Service::~Service() {
  // The engine is being destroyed: no reader is left, so everything retired can go now, while
  // the services its callbacks refer to are alive.
  reclaimer_.Collect();
  delete snapshot_.load();
  for (Endpoint* ep : endpoints_) delete ep;
}

uint64_t Service::NewKey() {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slot_incarnation_.size());
    slot_incarnation_.push_back(key_salt_);
  }
  // A reused slot gets a new incarnation, so a key held across a removal is refused as stale.
  // Incarnations start at the service's salt, so a key handed to the wrong service (both
  // have a slot 0) is refused too, instead of landing on that service's endpoint in the slot.
  const uint32_t inc = ++slot_incarnation_[slot];
  return (uint64_t{inc} << 32) | slot;
}

Status Service::SetEndpoints(const char* where, const SpecArray& specs, wt_release_fn release,
                             const Config& cfg, std::vector<PendingEvent>* events, uint64_t* keys,
                             uint64_t* epoch) {
  const size_t count = specs.count;
  if (count > cfg.limits.max_endpoints_per_service) {
    return {WT_ERR_LIMIT, fmt::format("{}: {} endpoints exceed "
                                      "limits.max_endpoints_per_service = {}",
                                      where, count, cfg.limits.max_endpoints_per_service)};
  }
  std::unordered_set<std::string_view> seen;
  seen.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const wt_endpoint_spec& s = specs[i];
    if (s.size != specs.stride) {
      return InvalidArgument(fmt::format("{}: specs[{}].size is {}, but specs[0].size is {}: "
                                         "every element of the array has the same size",
                                         where, i, s.size, specs.stride));
    }
    if (!s.id) return InvalidArgument(fmt::format("{}: specs[{}].id is NULL", where, i));
    const std::string_view id(s.id);
    if (id.empty() || id.size() > kMaxIdBytes) {
      return InvalidArgument(fmt::format("{}: specs[{}].id must be 1..{} bytes, got {}", where, i,
                                         kMaxIdBytes, id.size()));
    }
    if (!IsUtf8(id)) {
      return InvalidArgument(fmt::format("{}: specs[{}].id is not valid UTF-8", where, i));
    }
    if (!std::isfinite(s.base_weight) || s.base_weight <= 0 || s.base_weight > kMaxBaseWeight) {
      return InvalidArgument(fmt::format("{}: specs[{}].base_weight (endpoint {}) must be "
                                         "finite and in (0, {:g}], got {}",
                                         where, i, Quoted(id), kMaxBaseWeight, s.base_weight));
    }
    if (!seen.insert(id).second) {
      return {WT_ERR_DUPLICATE, fmt::format("{}: endpoint id {} appears twice (specs[{}])",
                                            where, Quoted(id), i)};
    }
  }

  std::lock_guard lock(mu_);
  const int64_t now = clock_.NowNs();
  std::unordered_map<std::string_view, Endpoint*> old;
  for (Endpoint* ep : endpoints_) old.emplace(ep->id, ep);
  std::vector<Endpoint*> next;
  next.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    auto it = old.find(specs[i].id);
    Endpoint* ep;
    if (it != old.end()) {
      ep = it->second;
      old.erase(it);
      ControlState& c = ep->ctl;
      // A discovery weight change rescales the endpoint's state, keeping its health share.
      const double scale = specs[i].base_weight / c.base;
      c.base = specs[i].base_weight;
      c.weight *= scale;
      c.target *= scale;
    } else {
      ep = new Endpoint(specs[i].id, NewKey());
      ep->load.Begin(cycles_);
      ControlState& c = ep->ctl;
      c.base = c.weight = c.target = specs[i].base_weight;
      c.added_ns = now;
      // Slow start protects a newcomer joining live traffic; a service's first set has no
      // traffic to protect it from.
      c.slow_start = had_endpoints_ && cfg.slow_start.window_ms > 0;
      events->push_back({WT_EVENT_ENDPOINT_ADDED, now, ep->id, 0, c.base, "{}"});
    }
    next.push_back(ep);
  }
  for (auto& [id, ep] : old) {
    events->push_back({WT_EVENT_ENDPOINT_REMOVED, now, ep->id, ep->ctl.weight, 0, "{}"});
    free_slots_.push_back(static_cast<uint32_t>(ep->key & 0xffffffffu));
  }
  std::vector<Endpoint*> removed;
  for (auto& [id, ep] : old) removed.push_back(ep);

  endpoints_ = std::move(next);
  controls_.clear();
  for (Endpoint* ep : endpoints_) controls_.push_back(&ep->ctl);
  had_endpoints_ = had_endpoints_ || count > 0;
  ChooseSubset(cfg);
  auto m = std::make_shared<Membership>();
  m->epoch = ++epoch_;
  m->endpoints = endpoints_;
  m->entries.reserve(count);
  m->loads.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    m->entries.push_back({endpoints_[i]->key, specs[i].user});
    m->loads.push_back(&endpoints_[i]->load);
  }
  m->by_slot.assign(slot_incarnation_.size(), nullptr);
  m->by_id.reserve(endpoints_.size());
  for (Endpoint* ep : endpoints_) {
    m->by_slot[ep->key & 0xffffffffu] = ep;
    m->by_id.emplace(ep->id, ep);
  }
  const uint64_t installed = m->epoch;
  Membership* installed_set = m.get();
  members_ = std::move(m);
  Publish(cfg, now, events);
  // Last: had anything above thrown (out of memory), the caller would keep its user pointers.
  installed_set->release = release;
  // Removed endpoints stay readable until no pick or report can still hold them.
  for (Endpoint* ep : removed) {
    reclaimer_.Retire([this, ep] {
      for (int o = 0; o < kOutcomes; ++o) removed_totals_[o] += ep->stats.Lifetime(o);
      delete ep;
    });
  }
  reclaimer_.Collect();
  // Last: out-parameters are written only on success.
  if (keys) {
    for (size_t i = 0; i < count; ++i) keys[i] = endpoints_[i]->key;
  }
  if (epoch) *epoch = installed;
  return Status::Ok();
}

void Service::Cycle(const Config& cfg, int64_t now, std::vector<PendingEvent>* events) {
  std::lock_guard lock(mu_);
  const size_t slots = static_cast<size_t>(
      (cfg.window.length_ms + cfg.controller.interval_ms - 1) / cfg.controller.interval_ms);
  // Cycle `cycles_` begins: the in-flight counts of cycle cycles_ - 2 expire (LoadEstimate) and
  // their parity counts this cycle's picks once Publish() below hands them the new number.
  ++cycles_;
  uint64_t results = 0, failures = 0;
  FleetFailures before;
  for (Endpoint* ep : endpoints_) before.Add(ep->load);
  for (Endpoint* ep : endpoints_) {
    ControlState& c = ep->ctl;
    if (!ep->in_subset) {
      // Outside the subset only stray results arrive (picks made before it left, or in a
      // panic's round-robin); they wait in its recorder (counted in its totals) for the cycle
      // after it rejoins. Its window is not kept, and never allocated for an endpoint never in
      // the subset: at 500 endpoints windows were a third of an engine's memory and most of
      // its cycle. The load estimate still ages, so a panic pick's in-flight count expires.
      c.cycle_results = 0;
      ep->load.NewCycle(cycles_, scratch_, cfg.isolation.exit_min_probes, before.Steady());
      continue;
    }
    CycleSample& sample = c.window.Next(slots);
    ep->stats.Drain(&sample);  // drains into the window's oldest slot, reused
    c.cycle_results = 0;
    for (uint64_t n : sample.outcomes) c.cycle_results += n;
    c.cycle_mean_ms = sample.latency_count ? sample.latency_sum_us / 1e3 / sample.latency_count : 0;
    results += c.cycle_results;
    failures += c.cycle_results - sample.outcomes[WT_OUTCOME_SUCCESS];
    // Read before NewCycle ages them: the evidence the cycle's picks were made on.
    c.picker = {ep->load.InFlight(), ep->load.ewma_ms.load(std::memory_order_relaxed),
                ep->load.FailureShare()};
    ep->load.NewCycle(cycles_, sample, cfg.isolation.exit_min_probes, before.Steady());
    ForgetPeak(cfg, sample, judged_.ref, ep->load);
    c.stats = c.window.Compute();
    std::array<int64_t, kResources> server_at;
    for (int i = 0; i < kResources; ++i) server_at[i] = ep->stats.ServerReportedAt(i);
    ResolveResources(cfg.load_report.prefer, cfg.load_report.max_age_ms * kNsPerMs, now,
                     server_at, &c.stats);
    c.stats.server_error_known = ep->stats.ServerErrorRate(
        now, cfg.load_report.max_age_ms * kNsPerMs, &c.stats.server_error_rate);
    c.stats.server_latency_known = ep->stats.ServerLatency(
        now, cfg.load_report.max_age_ms * kNsPerMs, &c.stats.server_latency_ms);
    ep->load.server_failure.store(c.stats.server_error_known ? c.stats.server_error_rate : 0.0,
                                  std::memory_order_relaxed);
  }
  FleetFailures after;
  for (Endpoint* ep : endpoints_) after.Add(ep->load);
  fast_weight_ = after.FastWeight();
  for (Endpoint* ep : endpoints_) {
    ep->ctl.share = results > 0 ? double(ep->ctl.cycle_results) / double(results) : 0.0;
  }
  ChooseSubset(cfg);
  // Endpoints outside the subset get no traffic: judging them would only call them unknown,
  // and stepping them would move weights no pick reads.
  JudgeFleet(cfg, now, active_, &judged_);
  if (cfg.picker.mode == PickMode::kLoadAware) {
    for (uint32_t i : active_index_) {
      Endpoint* ep = endpoints_[i];
      FloorLatency(ep->ctl.stats, JudgedSlowByServer(cfg, judged_.ref, ep->ctl), *ep);
    }
  }
  const uint32_t held_before = guard_.held;
  guard_ = GuardFleet(cfg, double(cfg.controller.interval_ms) / 1000.0, active_);
  std::string held_ids;
  for (uint32_t i : active_index_) {
    Endpoint* ep = endpoints_[i];
    StepEndpoint(cfg, judged_.ref, now, ep->id, ep->ctl, events);
    if (ep->ctl.slow_start && SlowStartFactor(cfg, ep->ctl.added_ns, now) >= 1) {
      ep->ctl.slow_start = false;
    }
    if (guard_.held != held_before && (ep->ctl.floor > 0 || !ep->ctl.may_isolate)) {
      held_ids += fmt::format("{}{}", held_ids.empty() ? "" : ",", JsonQuoted(ep->id));
    }
  }
  if (guard_.held != held_before) {
    events->push_back({WT_EVENT_GUARD, now, "", 0, 0,
                       fmt::format(R"({{"held":{},"endpoints":[{}],"headroom_rps":{:.6g},)"
                                   R"("moved_rps":{:.6g},"max_utilization":{:g}}})",
                                   guard_.held, held_ids, guard_.headroom_rps, guard_.moved_rps,
                                   cfg.guard.max_utilization)});
  }
  StepErrorBudget(cfg, now, results, failures, events);
  Publish(cfg, now, events);
  reclaimer_.Collect();
}

void Service::StepErrorBudget(const Config& cfg, int64_t now, uint64_t results, uint64_t failures,
                              std::vector<PendingEvent>* events) {
  if (cfg.budget.max_error_rate <= 0) {
    budget_ = BudgetState{};  // off: a budget set again later starts afresh
    return;
  }
  BudgetInput in{results, failures, 0.0};
  // Isolated endpoints get probes by weight, whatever the price: they are no lever.
  for (const Endpoint* ep : endpoints_) {
    if (ep->ctl.state != State::kIsolated) {
      in.lever = std::max(in.lever, ep->ctl.picker.failure_share);
    }
  }
  if (!StepBudget(cfg, in, &budget_)) return;
  const BudgetState& b = budget_;
  events->push_back({b.met ? WT_EVENT_BUDGET_MET : WT_EVENT_BUDGET_MISSED, now, "", 0, 0,
                     fmt::format(R"({{"max_error_rate":{:g},"observed_error_rate":{:g},)"
                                 R"("window_ms":{},"results":{},"failures":{},"error_cost":{:g},)"
                                 R"("limited":{}}})",
                                 cfg.budget.max_error_rate, b.observed, cfg.budget.window_ms,
                                 b.window_results, b.window_failures, b.price, b.limited)});
}

Evaluation Service::EvaluationOf(const Endpoint& ep) const {
  Evaluation eval;
  EvaluateInto(ep, &eval);
  return eval;
}

void Service::EvaluateInto(const Endpoint& ep, Evaluation* out) const {
  if (ep.ctl.judged) {
    Evaluate(judged_.rules, ep.ctl.Judged(), ep.ctl.HasEvidence(), judged_.ref, out);
  } else {
    out->penalty = out->failing = 0;
    out->hits.clear();
  }
}

void Service::Republish(const Config& cfg, std::vector<PendingEvent>* events) {
  std::lock_guard lock(mu_);
  // Weights stay, but a new panic threshold can start or end a panic, and a new subset config
  // choose other endpoints.
  ChooseSubset(cfg);
  Publish(cfg, clock_.NowNs(), events);
  reclaimer_.Collect();
}

void Service::Publish(const Config& cfg, int64_t now, std::vector<PendingEvent>* events) {
  auto* snap = new Snapshot();
  snap->members = members_ ? members_ : std::make_shared<Membership>();
  snap->max_latency_ms = cfg.limits.max_latency_ms;
  snap->thread_pool_metric = cfg.load_report.thread_pool_metric;
  snap->connection_pool_metric = cfg.load_report.connection_pool_metric;
  snap->latency_metric = cfg.load_report.latency_metric;
  Schedule& s = snap->schedule;
  s.mode = cfg.picker.mode;
  s.latency_decay_ns = double(cfg.picker.latency_decay_ms) * kNsPerMs;
  s.error_cost = EffectiveErrorCost(cfg, budget_);
  s.fast_weight = fast_weight_;
  s.keepalive_threshold = std::llround(cfg.picker.keepalive_share * 4294967296.0);
  s.cycle = cycles_;

  WeightPlan plan = PlanWeights(cfg, now, active_);
  if (subset_size_ > 0) {
    // The plan indexes the subset; picks index the caller's whole set.
    for (uint32_t& i : plan.main_items) i = active_index_[i];
    for (uint32_t& i : plan.probe_items) i = active_index_[i];
    for (Endpoint* ep : endpoints_) {
      if (!ep->in_subset) ep->ctl.effective = 0;
    }
  }
  s.main.Build(plan.main_items, plan.main_weights);
  if (!plan.probe_items.empty()) {
    s.probes.Build(plan.probe_items, plan.probe_weights);
    s.probe_threshold = plan.probe_threshold;
  }
  // Nothing to schedule at all (every weight 0, none isolated): round-robin rather than nothing.
  s.panic = plan.panic ||
            (plan.main_items.empty() && plan.probe_items.empty() && !endpoints_.empty());
  expected_.Capture(s, plan, *snap->members, controls_, cfg.controller.interval_ms / 1000.0);
  if (plan.panic != panic_) {
    events->push_back({plan.panic ? WT_EVENT_PANIC_ENTER : WT_EVENT_PANIC_EXIT, now, "", 0, 0,
                       fmt::format(R"({{"threshold":{:g},"endpoints":{}}})", cfg.panic.threshold,
                                   endpoints_.size())});
    panic_ = plan.panic;
  }
  Snapshot* old = snapshot_.exchange(snap, std::memory_order_seq_cst);
  if (old) reclaimer_.Retire([old] { delete old; });
}

inline Status Service::Record(Endpoint* ep, double latency_ms, int outcome, const Snapshot& snap) {
  ep->stats.Record(latency_ms, outcome);
  if (snap.schedule.mode == PickMode::kLoadAware) {
    ep->load.Record(latency_ms, outcome != WT_OUTCOME_SUCCESS, clock_.NowNs(),
                    snap.schedule.latency_decay_ns);
  }
  return Status::Ok();
}

Status Service::Pick(const char* where, wt_pick* out, wt_pin_fn pin, void* ctx) {
  Guarded g(*this);
  if (g.snap->members->endpoints.empty()) {
    return {WT_ERR_NO_ENDPOINT, fmt::format("{}: service {} has no endpoints", where, Quoted(name_))};
  }
  g.snap->schedule.Pick(*g.snap->members, g.reader.random, g.reader.stripe, out);
  if (pin && out->user) pin(ctx, out->user);  // the snapshot still holds the set: it is alive
  return Status::Ok();
}

Status Service::OutcomeError(const char* where, double latency_ms, int outcome,
                             const Snapshot& snap) {
  if (!(latency_ms >= 0 && latency_ms <= snap.max_latency_ms)) {
    return InvalidArgument(fmt::format("{}: latency_ms must be finite and in [0, {:g}] "
                                       "(limits.max_latency_ms), got {}",
                                       where, snap.max_latency_ms, latency_ms));
  }
  return InvalidArgument(fmt::format("{}: outcome must be a wt_outcome (0..{}), got {}", where,
                                     kOutcomes - 1, outcome));
}

Status Service::Finish(const char* where, const wt_pick& pick, double latency_ms, int outcome,
                       bool record) {
  Guarded g(*this);
  if (record) {
    if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
      return OutcomeError(where, latency_ms, outcome, *g.snap);
    }
  }
  Endpoint* ep = g.snap->members->Find(pick.key);
  if (!ep) {
    if (record) stale_reports_.fetch_add(1, std::memory_order_relaxed);
    return {WT_ERR_STALE, fmt::format("{}: endpoint key {:#x} is no longer in service {}",
                                      where, pick.key, Quoted(name_))};
  }
  if (pick.flags & WT_PICK_TRACKED) {
    ep->load.Release(pick.ticket, g.snap->schedule.cycle, g.reader.stripe);
  }
  return record ? Record(ep, latency_ms, outcome, *g.snap) : Status::Ok();
}

Status Service::ReportKey(const char* where, uint64_t key, double latency_ms, int outcome) {
  Guarded g(*this);
  if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
    return OutcomeError(where, latency_ms, outcome, *g.snap);
  }
  Endpoint* ep = g.snap->members->Find(key);
  if (!ep) {
    stale_reports_.fetch_add(1, std::memory_order_relaxed);
    return {WT_ERR_STALE, fmt::format("{}: endpoint key {:#x} is not in service {}", where,
                                      key, Quoted(name_))};
  }
  return Record(ep, latency_ms, outcome, *g.snap);
}

Status Service::ReportId(const char* where, std::string_view id, double latency_ms,
                         int outcome) {
  Guarded g(*this);
  if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
    return OutcomeError(where, latency_ms, outcome, *g.snap);
  }
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) {
    return NotFound(fmt::format("{}: no endpoint {} in service {}", where, Quoted(id), Quoted(name_)));
  }
  return Record(ep, latency_ms, outcome, *g.snap);
}

Status Service::ReportBatch(const char* where, wt_report* reports, size_t count, size_t stride,
                            size_t* recorded) {
  Status first;
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    auto& r = *reinterpret_cast<wt_report*>(reinterpret_cast<char*>(reports) + i * stride);
    Status s = ReportKey(where, r.key, r.latency_ms, r.outcome);
    r.status = s.code();
    if (s.ok()) ++n;
    else if (first.ok()) first = Status(s.code(), fmt::format("entry {}: {}", i, s.message()));
  }
  if (recorded) *recorded = n;
  return first;
}

Status Service::FinishWithLoad(const char* where, const wt_pick& pick, double latency_ms,
                               int outcome, std::string_view header) {
  Guarded g(*this);
  if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
    return OutcomeError(where, latency_ms, outcome, *g.snap);
  }
  Endpoint* ep = g.snap->members->Find(pick.key);
  if (!ep) {
    stale_reports_.fetch_add(1, std::memory_order_relaxed);
    return {WT_ERR_STALE, fmt::format("{}: endpoint key {:#x} is no longer in service {}",
                                      where, pick.key, Quoted(name_))};
  }
  if (pick.flags & WT_PICK_TRACKED) {
    ep->load.Release(pick.ticket, g.snap->schedule.cycle, g.reader.stripe);
  }
  Record(ep, latency_ms, outcome, *g.snap);
  if (header.empty()) return Status::Ok();
  return RecordLoad(where, ep, header, *g.snap);
}

Status Service::KeyOf(const char* where, std::string_view id, uint64_t* key) {
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) {
    return NotFound(fmt::format("{}: no endpoint {} in service {}", where, Quoted(id), Quoted(name_)));
  }
  *key = ep->key;
  return Status::Ok();
}

Status Service::IdOf(const char* where, uint64_t key, std::string* id) {
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(key);
  if (!ep) {
    return {WT_ERR_STALE, fmt::format("{}: endpoint key {:#x} is not in service {}", where,
                                      key, Quoted(name_))};
  }
  *id = ep->id;
  return Status::Ok();
}

}  // namespace weighted
