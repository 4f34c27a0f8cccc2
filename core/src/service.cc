#include "service.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "utf8.h"

namespace weighted {

namespace {
constexpr size_t kMaxIdBytes = 256;
constexpr double kMaxBaseWeight = 1e9;
constexpr uint64_t kProbeCap = uint64_t{1} << 31;  // probes never take more than half the picks

// From the name, not at random: the same calls give the same keys (the manual clock's promise).
uint32_t KeySalt(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}
}  // namespace

// Pins the current snapshot for one hot-path call.
struct Service::Guarded {
  explicit Guarded(Service& s)
      : reader(s.reclaimer_.ThisThread()), guard(s.reclaimer_, reader),
        snap(s.snapshot_.load(std::memory_order_seq_cst)) {}
  Reclaimer::Reader& reader;
  Reclaimer::Guard guard;
  const Snapshot* snap;
};

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

Status Service::SetEndpoints(const wt_endpoint_spec* specs, size_t count, const Config& cfg,
                             std::vector<PendingEvent>* events, uint64_t* epoch) {
  if (count > 0 && !specs) return InvalidArgument("wt_service_set_endpoints: specs is NULL");
  if (count > cfg.limits.max_endpoints_per_service) {
    return {WT_ERR_LIMIT, fmt::format("wt_service_set_endpoints: {} endpoints exceed "
                                      "limits.max_endpoints_per_service = {}",
                                      count, cfg.limits.max_endpoints_per_service)};
  }
  std::unordered_set<std::string_view> seen;
  seen.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const wt_endpoint_spec& s = specs[i];
    if (!s.id) return InvalidArgument(fmt::format("wt_service_set_endpoints: specs[{}].id is NULL", i));
    const std::string_view id(s.id);
    if (id.empty() || id.size() > kMaxIdBytes) {
      return InvalidArgument(fmt::format("wt_service_set_endpoints: specs[{}].id must be 1..{} "
                                         "bytes, got {}", i, kMaxIdBytes, id.size()));
    }
    if (!IsUtf8(id)) {
      return InvalidArgument(fmt::format("wt_service_set_endpoints: specs[{}].id is not valid "
                                         "UTF-8", i));
    }
    if (!std::isfinite(s.base_weight) || s.base_weight <= 0 || s.base_weight > kMaxBaseWeight) {
      return InvalidArgument(fmt::format("wt_service_set_endpoints: specs[{}].base_weight "
                                         "(endpoint \"{}\") must be finite and in (0, {:g}], got {}",
                                         i, id, kMaxBaseWeight, s.base_weight));
    }
    if (!seen.insert(id).second) {
      return {WT_ERR_DUPLICATE, fmt::format("wt_service_set_endpoints: endpoint id \"{}\" appears "
                                            "twice (specs[{}])", id, i)};
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
  had_endpoints_ = had_endpoints_ || count > 0;
  auto m = std::make_shared<Membership>();
  m->epoch = ++epoch_;
  m->endpoints = endpoints_;
  m->keys.reserve(endpoints_.size());
  for (Endpoint* ep : endpoints_) m->keys.push_back(ep->key);
  m->by_slot.assign(slot_incarnation_.size(), nullptr);
  m->by_id.reserve(endpoints_.size());
  for (Endpoint* ep : endpoints_) {
    m->by_slot[ep->key & 0xffffffffu] = ep;
    m->by_id.emplace(ep->id, ep);
  }
  const uint64_t installed = m->epoch;
  members_ = std::move(m);
  Publish(cfg, now, events);
  // Removed endpoints stay readable until no pick or report can still hold them.
  for (Endpoint* ep : removed) {
    reclaimer_.Retire([this, ep] {
      for (int o = 0; o < kOutcomes; ++o) removed_totals_[o] += ep->stats.Lifetime(o);
      delete ep;
    });
  }
  reclaimer_.Collect();
  if (epoch) *epoch = installed;  // last: out-parameters are written only on success
  return Status::Ok();
}

void Service::Cycle(const Config& cfg, int64_t now, std::vector<PendingEvent>* events) {
  std::lock_guard lock(mu_);
  const size_t slots = static_cast<size_t>(
      (cfg.window.length_ms + cfg.controller.interval_ms - 1) / cfg.controller.interval_ms);
  std::vector<const WindowStats*> known;
  // Cycle `cycles_` begins: the in-flight counts of cycle cycles_ - 2 expire (Endpoint::inflight)
  // and their parity counts this cycle's picks once Publish() below hands them the new number.
  ++cycles_;
  for (Endpoint* ep : endpoints_) {
    ep->inflight[cycles_ & 1].store(0, std::memory_order_relaxed);
    ControlState& c = ep->ctl;
    CycleSample& sample = c.window.Next(slots);
    ep->stats.Drain(&sample);  // drains into the window's oldest slot, reused
    // Load-aware failure estimates. The fast one halves each cycle: an endpoint that lost every
    // pick since it failed gets tried again, and one still failing raises it within a few
    // requests. Both forget at once after a clean cycle with enough evidence (at least
    // isolation.exit_min_probes results, none failed: what lets an isolated endpoint out), so a
    // recovered endpoint is back within a cycle instead of several decay times; one failing 15%
    // of ~10 picks a cycle has such a cycle one time in five and is priced again at its next
    // failure.
    ep->failure_ewma.store(ep->failure_ewma.load(std::memory_order_relaxed) * 0.5,
                           std::memory_order_relaxed);
    uint64_t results = 0;
    for (uint64_t n : sample.outcomes) results += n;
    if (results >= cfg.isolation.exit_min_probes &&
        sample.outcomes[WT_OUTCOME_SUCCESS] == results) {
      ep->failure_ewma.store(0, std::memory_order_relaxed);
      ep->fail_decayed.store(0, std::memory_order_relaxed);
    }
    c.stats = c.window.Compute();
    const uint64_t needed = c.state == State::kIsolated ? cfg.isolation.exit_min_probes
                                                        : cfg.window.min_requests;
    c.known = c.stats.requests >= needed;
    if (c.known && c.state != State::kIsolated) known.push_back(&c.stats);
  }
  judged_ref_ = ComputeReference(known);
  judged_rules_ = cfg.rules;  // what EvaluationOf() explains the penalties with
  for (Endpoint* ep : endpoints_) {
    ep->ctl.penalty = Penalty(cfg.rules, ep->ctl.stats, ep->ctl.known, judged_ref_);
    ep->ctl.judged = true;
    StepEndpoint(cfg, judged_ref_, now, *ep, events);
    if (ep->ctl.slow_start && SlowStartFactor(cfg, ep->ctl.added_ns, now) >= 1) {
      ep->ctl.slow_start = false;
    }
  }
  Publish(cfg, now, events);
  reclaimer_.Collect();
}

Evaluation Service::EvaluationOf(const Endpoint& ep) const {
  Evaluation eval;
  if (ep.ctl.judged) Evaluate(judged_rules_, ep.ctl.stats, ep.ctl.known, judged_ref_, &eval);
  return eval;
}

void Service::Republish(const Config& cfg, std::vector<PendingEvent>* events) {
  std::lock_guard lock(mu_);
  // Weights stay, but a new panic threshold can start or end a panic.
  Publish(cfg, clock_.NowNs(), events);
  reclaimer_.Collect();
}

void Service::Publish(const Config& cfg, int64_t now, std::vector<PendingEvent>* events) {
  auto* snap = new Snapshot();
  snap->members = members_ ? members_ : std::make_shared<Membership>();
  snap->mode = cfg.picker.mode;
  snap->max_latency_ms = cfg.limits.max_latency_ms;
  snap->latency_decay_ns = double(cfg.picker.latency_decay_ms) * kNsPerMs;
  snap->error_cost = cfg.picker.error_cost;
  snap->keepalive_threshold = std::llround(cfg.picker.keepalive_share * 4294967296.0);
  snap->cycle = cycles_;

  std::vector<uint32_t> main_items, probe_items;
  std::vector<double> main_w, probe_base;
  double main_total = 0;
  uint64_t window_requests = 0;
  bool all_low = !endpoints_.empty();
  for (uint32_t i = 0; i < endpoints_.size(); ++i) {
    ControlState& c = endpoints_[i]->ctl;
    window_requests += c.stats.requests;
    if (c.state == State::kIsolated) {
      c.effective = 0;
      probe_items.push_back(i);
      probe_base.push_back(c.base);
      continue;
    }
    c.effective = c.weight * (c.slow_start ? SlowStartFactor(cfg, c.added_ns, now) : 1.0);
    if (c.effective >= cfg.panic.threshold * c.base) all_low = false;
    if (c.effective > 0) {
      main_items.push_back(i);
      main_w.push_back(c.effective);
      main_total += c.effective;
    }
  }
  snap->main.Build(main_items, main_w);
  if (!probe_items.empty()) {
    // Each isolated endpoint gets probe_share of its base weight, but at least enough picks for
    // probe_min_per_s at the service's observed request rate (S-S3: recovery must be seen).
    const double window_s = std::max(1.0, cfg.window.length_ms / 1000.0);
    const double rate = window_requests / window_s;
    double probe_total = 0;
    for (size_t k = 0; k < probe_items.size(); ++k) {
      double w = cfg.isolation.probe_share * probe_base[k];
      if (rate > 0 && main_total > 0) {
        w = std::max(w, main_total * cfg.isolation.probe_min_per_s / rate);
      }
      probe_base[k] = std::max(w, 1e-12);
      probe_total += probe_base[k];
    }
    snap->probes.Build(probe_items, probe_base);
    const double share = main_total > 0 ? probe_total / (probe_total + main_total) : 1.0;
    snap->probe_threshold = std::min<uint64_t>(kProbeCap, std::llround(share * 4294967296.0));
  }
  const bool panic = cfg.panic.enabled && all_low;
  snap->panic = panic || (main_items.empty() && probe_items.empty() && !endpoints_.empty());
  if (panic != panic_) {
    events->push_back({panic ? WT_EVENT_PANIC_ENTER : WT_EVENT_PANIC_EXIT, now, "", 0, 0,
                       fmt::format(R"({{"threshold":{:g},"endpoints":{}}})", cfg.panic.threshold,
                                   endpoints_.size())});
    panic_ = panic;
  }
  Snapshot* old = snapshot_.exchange(snap, std::memory_order_seq_cst);
  if (old) reclaimer_.Retire([old] { delete old; });
}

Status Service::Pick(wt_pick* out) {
  Guarded g(*this);
  if (g.snap->members->endpoints.empty()) {
    return {WT_ERR_NO_ENDPOINT, fmt::format("wt_service_pick: service \"{}\" has no endpoints", name_)};
  }
  g.snap->Pick(g.reader, out);
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

Status Service::Record(Endpoint* ep, double latency_ms, int outcome, const Snapshot& snap) {
  ep->stats.Record(latency_ms, outcome);
  if (snap.mode == PickMode::kLoadAware) UpdateLoad(ep, latency_ms, outcome, snap);
  return Status::Ok();
}

void Service::UpdateLoad(Endpoint* ep, double latency_ms, int outcome, const Snapshot& snap) {
  // Every estimate here is updated racily (plain loads and stores, no read-modify-write): two
  // reports racing on one endpoint may lose one sample's influence, never corrupt a value, and
  // a report pays no locked instruction for them.
  auto decay_since = [&](std::atomic<int64_t>& at, int64_t now) {
    const double dt = double(now - at.load(std::memory_order_relaxed));
    at.store(now, std::memory_order_relaxed);
    return std::exp(-std::max(dt, 0.0) / snap.latency_decay_ns);
  };
  const int64_t now = clock_.NowNs();
  const bool failed = outcome != WT_OUTCOME_SUCCESS;
  const double prev = ep->ewma_ms.load(std::memory_order_relaxed);
  // Peak EWMA (Finagle): a slower sample is taken at once, faster ones decay in with tau. A
  // failure may raise the estimate but never lower it: an endpoint that fails in 1 ms must not
  // look fast and attract traffic (Prequal's "sinkholing").
  if (!failed || prev <= 0 || latency_ms > prev) {
    const double w = decay_since(ep->ewma_at_ns, now);
    const double next = latency_ms > prev || prev <= 0 ? latency_ms : prev * w + latency_ms * (1 - w);
    ep->ewma_ms.store(std::max(next, 1e-3), std::memory_order_relaxed);
  }
  // Recent failure share over the last ~16 outcomes: reacts within a few requests, where the
  // controller's window reacts within a cycle.
  const double f = ep->failure_ewma.load(std::memory_order_relaxed);
  ep->failure_ewma.store(f + ((failed ? 1.0 : 0.0) - f) / 16.0, std::memory_order_relaxed);
  // Failure share over the decay time: both sums decay alike, so their ratio needs no decay
  // when read, and it stays put while the endpoint gets no picks.
  const double w = decay_since(ep->fail_at_ns, now);
  const double fails = ep->fail_decayed.load(std::memory_order_relaxed) * w + (failed ? 1 : 0);
  const double all = ep->outcomes_decayed.load(std::memory_order_relaxed) * w + 1;
  ep->fail_decayed.store(fails, std::memory_order_relaxed);
  ep->outcomes_decayed.store(all, std::memory_order_relaxed);
}

Status Service::Finish(const wt_pick& pick, double latency_ms, int outcome, bool record) {
  Guarded g(*this);
  if (record) {
    if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
      return OutcomeError("wt_service_complete", latency_ms, outcome, *g.snap);
    }
  }
  Endpoint* ep = g.snap->members->Find(pick.key);
  if (!ep) {
    if (record) stale_reports_.fetch_add(1, std::memory_order_relaxed);
    return {WT_ERR_STALE, fmt::format("wt_service_complete: endpoint key {:#x} is no longer in "
                                      "service \"{}\"", pick.key, name_)};
  }
  if (pick.flags & WT_PICK_TRACKED) {
    // Counted in cycle c, the pick's count lives until cycle c + 2 begins; after that it has
    // expired, and taking it off again would eat a newer pick's count.
    const uint32_t counted = pick.flags >> kPickCycleShift;
    if (((g.snap->cycle - counted) & 0xffu) <= 1) {
      ep->inflight[counted & 1].fetch_sub(1, std::memory_order_relaxed);
    }
  }
  return record ? Record(ep, latency_ms, outcome, *g.snap) : Status::Ok();
}

Status Service::ReportKey(uint64_t key, double latency_ms, int outcome) {
  Guarded g(*this);
  if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
    return OutcomeError("wt_service_report_key", latency_ms, outcome, *g.snap);
  }
  Endpoint* ep = g.snap->members->Find(key);
  if (!ep) {
    stale_reports_.fetch_add(1, std::memory_order_relaxed);
    return {WT_ERR_STALE, fmt::format("wt_service_report_key: endpoint key {:#x} is not in "
                                      "service \"{}\"", key, name_)};
  }
  return Record(ep, latency_ms, outcome, *g.snap);
}

Status Service::ReportId(std::string_view id, double latency_ms, int outcome) {
  Guarded g(*this);
  if (!ValidOutcome(latency_ms, outcome, *g.snap)) [[unlikely]] {
    return OutcomeError("wt_service_report", latency_ms, outcome, *g.snap);
  }
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) {
    return NotFound(fmt::format("wt_service_report: no endpoint \"{}\" in service \"{}\"", id, name_));
  }
  return Record(ep, latency_ms, outcome, *g.snap);
}

Status Service::ReportBatch(wt_report* reports, size_t count, size_t* recorded) {
  Status first;
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    Status s = ReportKey(reports[i].key, reports[i].latency_ms, reports[i].outcome);
    reports[i].status = s.code();
    if (s.ok()) ++n;
    else if (first.ok()) first = Status(s.code(), fmt::format("entry {}: {}", i, s.message()));
  }
  if (recorded) *recorded = n;
  return first;
}

Status Service::ReportResources(std::string_view id, const wt_resources& r) {
  const double values[kResources] = {r.cpu, r.memory, r.thread_pool, r.connection_pool};
  static const char* const kNames[kResources] = {"cpu", "memory", "thread_pool", "connection_pool"};
  if (r.present & ~0xFu) {
    return InvalidArgument(fmt::format("wt_service_report_resources: unknown bits {:#x} in present",
                                       r.present & ~0xFu));
  }
  for (int i = 0; i < kResources; ++i) {
    if ((r.present & (1u << i)) && !(values[i] >= 0 && values[i] <= 1)) {
      return InvalidArgument(fmt::format("wt_service_report_resources: {} must be a fraction in "
                                         "[0, 1], got {}", kNames[i], values[i]));
    }
  }
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) {
    return NotFound(fmt::format("wt_service_report_resources: no endpoint \"{}\" in service \"{}\"",
                                id, name_));
  }
  ep->stats.RecordResources(r);
  return Status::Ok();
}

Status Service::KeyOf(std::string_view id, uint64_t* key) {
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) {
    return NotFound(fmt::format("wt_service_endpoint_key: no endpoint \"{}\" in service \"{}\"", id, name_));
  }
  *key = ep->key;
  return Status::Ok();
}

Status Service::IdOf(uint64_t key, std::string* id) {
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(key);
  if (!ep) {
    return {WT_ERR_STALE, fmt::format("wt_service_endpoint_id: endpoint key {:#x} is not in "
                                      "service \"{}\"", key, name_)};
  }
  *id = ep->id;
  return Status::Ok();
}

}  // namespace weighted
