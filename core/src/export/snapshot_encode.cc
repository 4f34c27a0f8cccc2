// The snapshot's record written from the engine (EncodeSnapshot), with its size estimate; the
// layout and the reader are in snapshot_record.h / snapshot_record.cc.
#include "export/snapshot_record.h"

#include "config/config.h"
#include "export/json_writer.h"
#include "model/endpoint_state.h"
#include "runtime/engine.h"
#include "stats/window.h"

namespace weighted {

namespace {

BudgetRecord EncodeBudget(const Config& cfg, const BudgetState& s) {
  BudgetRecord r{};
  if (cfg.budget.max_error_rate <= 0) return r;
  r.on = 1;
  r.max_error_rate = cfg.budget.max_error_rate;
  r.target_fraction = cfg.budget.target_fraction;
  r.window_ms = cfg.budget.window_ms;
  r.observed_error_rate = s.observed;
  r.window_results = s.window_results;
  r.window_failures = s.window_failures;
  r.error_cost = EffectiveErrorCost(cfg, s);
  r.met = s.met;
  r.limited = s.limited;
  return r;
}

void EncodeEndpoint(const Endpoint& ep, const Evaluation& eval, uint32_t index, double expected,
                    ByteSink& out) {
  const ControlState& c = ep.ctl;
  const WindowStats& s = c.stats;
  EndpointRecord r{};
  r.key = ep.key;
  r.index = index;
  r.base = c.base;
  r.weight = c.weight;
  r.target = c.target;
  r.effective = c.effective;
  r.penalty = c.penalty;
  r.requests = s.requests;
  for (int o = 0; o < kOutcomes; ++o) r.outcomes[o] = s.outcomes[o];
  r.error_rate = s.error_rate;
  r.mean_ms = s.mean_ms;
  r.p95_ms = s.p95_ms;
  r.p99_ms = s.p99_ms;
  for (int i = 0; i < kResources; ++i) {
    r.resources[i] = s.resources[i];
    r.server_resources[i] = s.server_resources[i];
    r.resource_known[i] = s.resource_known[i];
    r.server_known[i] = s.server_known[i];
    r.resource_origin[i] = static_cast<uint8_t>(s.resource_origin[i]);
    r.server_at_ns[i] = ep.stats.ServerReportedAt(i);
  }
  r.server_reports = ep.stats.server_reports();
  r.bad_reports = ep.stats.bad_reports();
  const HotStats::ServerRates rates = ep.stats.Rates();
  r.rps = rates.rps;
  r.eps = rates.eps;
  r.has_rps = rates.has_rps;
  r.has_eps = rates.has_eps;
  r.rates_at_ns = rates.at_ns;
  r.server_error_rate = s.server_error_rate;
  r.server_error_known = s.server_error_known;
  r.inflight = ep.load.InFlight();
  r.share = c.share;
  r.cycle_results = c.cycle_results;
  r.expected_share = expected;
  r.picker_inflight = c.picker.inflight;
  r.picker_latency_ms = c.picker.latency_ms;
  r.picker_failure_share = c.picker.failure_share;
  r.isolated_since_ns = c.isolated_since_ns;
  r.forced_restores = c.forced_restores;
  for (int o = 0; o < kOutcomes; ++o) r.totals[o] = ep.stats.Lifetime(o);
  r.hits = eval.hits.size();
  r.state = static_cast<uint8_t>(c.state);
  r.known = c.known;
  r.evidence = static_cast<uint8_t>(c.evidence);
  r.slow_start = c.slow_start;
  r.in_subset = ep.in_subset;
  out.Pod(r);
  out.String(ep.id);
  for (const RuleHit& h : eval.hits) {
    HitRecord hr{};
    hr.value = h.value;
    hr.threshold = h.threshold;
    hr.penalty = h.penalty;
    hr.metric = static_cast<uint8_t>(h.metric);
    hr.fired = h.fired;
    hr.evaluated = h.evaluated;
    out.Pod(hr);
  }
}

}  // namespace

void ByteSink::String(std::string_view s) {
  static constexpr char kZeros[8] = {};
  Pod(static_cast<uint64_t>(s.size()));
  Put(s.data(), s.size());
  Put(kZeros, Padded(s.size()) - s.size());
}

void ByteSink::Grow(size_t need) {
  grow_->resize(std::max(need, grow_->size() * 2));
  p_ = grow_->data();
  cap_ = grow_->size();
}

// How many endpoints ahead EncodeSnapshot prefetches.
constexpr uint32_t kAhead = 4;

size_t EncodeSnapshot(Engine& engine, ByteSink& out, const HistoryPointHeader* header,
                      std::string* point, const SnapshotScope& scope) {
  engine.CollectRetired();  // settles the totals of removed endpoints that no reader holds
  auto cfg = engine.config();
  const std::vector<SourceView> sources = engine.Sources();
  SnapshotHead head{};
  head.version = WT_VERSION_NUMBER;
  head.now_ns = engine.Now();
  head.events_total = engine.events().total();
  head.events_dropped = engine.events().dropped();
  head.sources = sources.size();
  head.manual = engine.manual();
  head.load_aware = cfg->picker.mode == PickMode::kLoadAware;
  out.Pod(head);
  out.String(cfg->profile);
  for (const SourceView& v : sources) {
    const SourceRecord r{v.polls, v.failed, v.series, v.matched, v.age_ms.has_value(),
                         v.age_ms.value_or(0)};
    out.Pod(r);
    for (const std::string* s : {&v.name, &v.url, &v.state, &v.last_error, &v.library}) {
      out.String(*s);
    }
  }
  JsonWriter pw(point ? std::move(*point) : std::string());
  HistoryPointWriter hp(pw);
  const bool with_point = point && header;
  if (with_point) hp.Begin(*header);
  size_t recorded = 0;
  Evaluation eval;
  engine.ForEachService([&](Service& svc) {
    if (scope.service && &svc != scope.service) return;
    svc.Inspect([&](Service& s) {
      // One endpoint: found by id under the service's mutex, so it is the one encoded.
      const std::vector<Endpoint*>& all = s.endpoints();
      uint32_t first = 0, end = static_cast<uint32_t>(all.size());
      if (!scope.endpoint_id.empty()) {
        while (first < end && all[first]->id != scope.endpoint_id) ++first;
        end = first < end ? first + 1 : first;
      }
      ServiceRecord r{};
      r.epoch = s.epoch();
      r.panic = s.panic();
      r.stale_reports = s.stale_reports();
      r.bad_load_reports = s.bad_load_reports();
      for (int o = 0; o < kOutcomes; ++o) r.removed_totals[o] = s.removed_total(o);
      r.endpoints = end - first;
      r.subset_size = s.subset_size();
      r.subset_of = s.endpoints().size();
      out.Pod(kMoreServices);
      out.Pod(r);
      out.String(s.name());
      out.Pod(EncodeBudget(*cfg, s.budget()));
      const GuardVerdict& g = s.guard();
      out.Pod(GuardRecord{g.headroom_rps, g.moved_rps, g.held,
                          uint64_t{g.enabled} | (uint64_t{g.headroom_known} << 1)});
      if (with_point) hp.BeginService(s.name(), s.panic());
      recorded += end - first;
      const std::vector<double>& expected = s.expected_shares();
      for (uint32_t i = first; i < end; ++i) {
        const Endpoint& ep = *all[i];
        // The endpoints are objects of ~1.5 KB each, scattered over the heap: at 100 000 of them
        // (~200 MB) every one is a round of cache misses the hardware cannot foresee (a pointer
        // away). The lines of the one a few ahead are asked for while this one is encoded.
        if (i + kAhead < end) {
          const char* next = reinterpret_cast<const char*>(all[i + kAhead]);
          for (size_t line = 0; line < sizeof(Endpoint); line += 64) __builtin_prefetch(next + line);
        }
        s.EvaluateInto(ep, &eval);
        EncodeEndpoint(ep, eval, i, expected[i], out);
        out.Boundary();
        // The point's columns are the snapshot's "effective_weight", "share.expected",
        // "share.last_cycle" and "penalty" of the same endpoint.
        if (with_point) {
          const ControlState& c = ep.ctl;
          hp.Endpoint(ep.id, StateName(c.state), c.effective, expected[i], c.share, c.penalty);
        }
      }
      if (with_point) hp.EndService();
    });
  });
  out.Pod(kNoMoreServices);
  out.Finish();
  if (with_point) hp.End();
  if (point) *point = pw.Take();
  return recorded;
}

size_t RecordSizeEstimate(Engine& engine, const SnapshotScope& scope) {
  const size_t rules = engine.config()->rules.size();
  size_t endpoints = 0, services = 0;
  engine.ForEachService([&](Service& svc) {
    if (scope.service && &svc != scope.service) return;
    svc.Inspect([&](Service& s) { endpoints += s.endpoints().size(); });
    ++services;
  });
  constexpr size_t kId = 8 + 40;  // length and padded bytes
  return 4096 + services * 512 + endpoints * (sizeof(EndpointRecord) + kId + rules * sizeof(HitRecord));
}

}  // namespace weighted
