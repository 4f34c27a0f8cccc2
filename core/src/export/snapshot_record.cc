#include "export/snapshot_record.h"

#include <fmt/format.h>

#include "config/config.h"
#include "export/json_writer.h"
#include "model/endpoint_state.h"
#include "runtime/engine.h"
#include "stats/window.h"
#include "util/clock.h"
#include "util/quoted.h"
#include "util/utf8.h"

namespace weighted {

namespace {

constexpr uint64_t kMoreServices = 1, kNoMoreServices = 0;
constexpr int kStates = 5;   // State::kHealthy .. kFailing
// The failure share at which the default price (picker.error_cost 500) doubles a cost.
constexpr double kPricedOut = 1.0 / 500;
constexpr int kOrigins = 3;  // ResourceOrigin::kNone .. kServer

size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

// (now - at) in milliseconds. Wrapping, so that a hostile record's times cannot overflow; for
// any times an engine holds it is the plain difference.
int64_t AgeMs(int64_t now, int64_t at) {
  return static_cast<int64_t>(static_cast<uint64_t>(now) - static_cast<uint64_t>(at)) / kNsPerMs;
}

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

// Reads a record front to back; the first thing that does not fit ends it, with the reason.
class ByteSource {
 public:
  explicit ByteSource(std::string_view bytes) : b_(bytes) {}

  template <typename T>
  bool Pod(T* v, const char* what) {
    if (b_.size() - at_ < sizeof(T)) return Fail(fmt::format("{} cut short", what));
    std::memcpy(v, b_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool String(std::string_view* s, const char* what) {
    uint64_t n;
    if (!Pod(&n, what)) return false;
    if (n > b_.size() - at_ || Padded(n) > b_.size() - at_) {
      return Fail(fmt::format("{}: {} bytes claimed, {} left", what, n, b_.size() - at_));
    }
    *s = b_.substr(at_, n);
    at_ += Padded(n);
    if (!IsUtf8(*s)) return Fail(fmt::format("{} is not UTF-8", what));
    return true;
  }
  // Whether `count` items of `size` bytes can still follow (so a hostile count is refused before
  // any loop runs over it).
  bool Room(uint64_t count, size_t size, const char* what) {
    if (count > (b_.size() - at_) / size) {
      return Fail(fmt::format("{}: {} claimed, room for {}", what, count, (b_.size() - at_) / size));
    }
    return true;
  }
  bool Fail(std::string why) {
    if (error_.empty()) error_ = fmt::format("byte {}: {}", at_, why);
    return false;
  }
  // Names where the first failure happened, outermost last: "endpoint 3 of service ...: ...".
  void Within(const std::string& where) { error_ = fmt::format("{}: {}", where, error_); }
  size_t left() const { return b_.size() - at_; }
  const std::string& error() const { return error_; }

 private:
  std::string_view b_;
  size_t at_ = 0;
  std::string error_;
};

namespace {

void Nullable(JsonWriter& w, bool has, double v) {
  if (has) w.Double(v);
  else w.Null();
}

void RenderWindow(const EndpointRecord& r, JsonWriter& w) {
  w.BeginObject().Key("requests").Uint(r.requests);
  w.Key("errors").BeginObject();
  for (int o = 1; o < kOutcomes; ++o) w.CodeKey(OutcomeName(o)).Uint(r.outcomes[o]);
  w.EndObject();
  w.Key("error_rate").Double(r.error_rate);
  w.Key("mean_ms").Double(r.mean_ms).Key("p95_ms").Double(r.p95_ms).Key("p99_ms").Double(r.p99_ms);
  w.Key("resources").BeginObject();
  for (int i = 0; i < kResources; ++i) Nullable(w.CodeKey(ResourceName(i)), r.resource_known[i], r.resources[i]);
  // Which report each value the rules read came from, and the servers' own window averages.
  w.EndObject().Key("resource_origin").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    w.CodeKey(ResourceName(i)).CodeString(OriginName(static_cast<ResourceOrigin>(r.resource_origin[i])));
  }
  w.EndObject().Key("server_resources").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    Nullable(w.CodeKey(ResourceName(i)), r.server_known[i], r.server_resources[i]);
  }
  w.EndObject();
  Nullable(w.Key("server_error_rate"), r.server_error_known, r.server_error_rate);
  w.EndObject();
}

// The servers' reports on this endpoint: how many, how many refused, the last rates and ages.
void RenderServerReport(const EndpointRecord& r, int64_t now, JsonWriter& w) {
  const auto age = [&](int64_t at) -> JsonWriter& {
    return at == INT64_MIN ? w.Null() : w.Int(AgeMs(now, at));
  };
  w.BeginObject().Key("reports").Uint(r.server_reports).Key("malformed").Uint(r.bad_reports);
  Nullable(w.Key("rps"), r.has_rps, r.rps);
  Nullable(w.Key("eps"), r.has_eps, r.eps);
  w.Key("rates_age_ms");
  age(r.rates_at_ns);
  w.Key("age_ms").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    w.CodeKey(ResourceName(i));
    age(r.server_at_ns[i]);
  }
  w.EndObject().EndObject();
}

// The judgement's main contributors: the largest fired rules, then the picker's failure share
// where it prices the endpoint out (a failure term that at least doubles its cost at the
// default price), so "why does this instance get 2%?" has its answer in one place.
constexpr size_t kMaxContributors = 3;

void KeepLargest(const HitRecord& h, HitRecord* top, size_t* n) {
  size_t at = *n < kMaxContributors ? (*n)++ : kMaxContributors;
  if (at == kMaxContributors) {
    if (top[kMaxContributors - 1].penalty >= h.penalty) return;
    at = kMaxContributors - 1;
  }
  while (at > 0 && top[at - 1].penalty < h.penalty) {
    top[at] = top[at - 1];
    --at;
  }
  top[at] = h;
}

const char* EvidenceOf(const EndpointRecord& r) {
  // Format 3.0 wrote 0 (window) whatever the window held: its "known" says which it was.
  const auto e = static_cast<Evidence>(r.evidence);
  if (e == Evidence::kWindow && !r.known) return EvidenceName(Evidence::kNone);
  return EvidenceName(e);
}

void RenderJudgement(const EndpointRecord& r, bool load_aware, const HitRecord* fired,
                     size_t nfired, JsonWriter& w) {
  w.Key("judgement").BeginObject().Key("evidence").CodeString(EvidenceOf(r));
  w.Key("contributors").BeginArray();
  for (size_t i = 0; i < nfired; ++i) {
    const HitRecord& h = fired[i];
    w.BeginObject().Key("source").CodeString("rule");
    w.Key("metric").CodeString(MetricName(static_cast<Metric>(h.metric)));
    w.Key("value").Double(h.value).Key("threshold").Double(h.threshold);
    w.Key("contribution").Double(h.penalty).EndObject();
  }
  if (load_aware && r.picker_failure_share > kPricedOut) {
    w.BeginObject().Key("source").CodeString("picker");
    w.Key("metric").CodeString("failure_share").Key("value").Double(r.picker_failure_share);
    w.Key("threshold").Double(kPricedOut).EndObject();
  }
  w.EndArray().EndObject();
}

bool RenderEndpoint(ByteSource& in, int64_t now, bool load_aware, JsonWriter& w) {
  EndpointRecord r;
  std::string_view id;
  if (!in.Pod(&r, "endpoint") || !in.String(&id, "endpoint id")) return false;
  if (r.state >= kStates) return in.Fail(fmt::format("state {} is not a state", r.state));
  if (r.evidence > static_cast<uint8_t>(Evidence::kLastCycle)) {
    return in.Fail(fmt::format("evidence {} is not a kind of evidence", r.evidence));
  }
  for (int i = 0; i < kResources; ++i) {
    if (r.resource_origin[i] >= kOrigins) {
      return in.Fail(fmt::format("resource origin {} is not an origin", r.resource_origin[i]));
    }
  }
  if (!in.Room(r.hits, sizeof(HitRecord), "rule hits")) return false;
  const auto state = static_cast<State>(r.state);
  w.BeginObject().Key("id").String(id).Key("index").Uint(r.index).Key("key").Uint(r.key);
  w.Key("state").CodeString(StateName(state)).Key("known").Bool(r.known);
  w.Key("slow_start").Bool(r.slow_start).Key("in_subset").Bool(r.in_subset);
  w.Key("base_weight").Double(r.base);
  w.Key("weight").Double(r.weight).Key("target").Double(r.target);
  w.Key("effective_weight").Double(r.effective).Key("penalty").Double(r.penalty);
  w.Key("rules").BeginArray();
  HitRecord fired[kMaxContributors];
  size_t nfired = 0;
  for (uint64_t i = 0; i < r.hits; ++i) {
    HitRecord h;
    if (!in.Pod(&h, "rule hit")) return false;
    if (h.metric >= kMetricCount) return in.Fail(fmt::format("metric {} is not a metric", h.metric));
    w.BeginObject().Key("metric").CodeString(MetricName(static_cast<Metric>(h.metric)));
    Nullable(w.Key("value"), h.evaluated, h.value);
    w.Key("threshold").Double(h.threshold).Key("penalty").Double(h.penalty);
    w.Key("fired").Bool(h.fired).Key("contribution").Double(h.fired ? h.penalty : 0.0);
    w.EndObject();
    if (h.fired) KeepLargest(h, fired, &nfired);
  }
  w.EndArray();
  RenderJudgement(r, load_aware, fired, nfired, w);
  w.Key("window");
  RenderWindow(r, w);
  w.Key("server_report");
  RenderServerReport(r, now, w);
  w.Key("inflight").Int(r.inflight);
  // What the traffic did in the last cycle, and what the model expects it to do in the next,
  // beside what the weights say (they differ in the load-aware mode, where the cost comparison
  // picks among candidates drawn by weight).
  w.Key("share").BeginObject().Key("last_cycle").Double(r.share);
  w.Key("results").Uint(r.cycle_results).Key("expected").Double(r.expected_share).EndObject();
  w.Key("picker");
  if (load_aware) {
    w.BeginObject().Key("inflight").Int(r.picker_inflight);
    w.Key("latency_ms").Double(r.picker_latency_ms);
    w.Key("failure_share").Double(r.picker_failure_share).EndObject();
  } else {
    w.Null();
  }
  w.Key("isolated_for_ms").Int(state == State::kIsolated ? AgeMs(now, r.isolated_since_ns) : 0);
  w.Key("forced_restores").Uint(r.forced_restores);
  w.Key("totals").BeginObject();
  for (int o = 0; o < kOutcomes; ++o) w.CodeKey(OutcomeName(o)).Uint(r.totals[o]);
  w.EndObject().EndObject();
  return true;
}

bool RenderSources(ByteSource& in, uint64_t count, JsonWriter& w) {
  w.Key("sources").BeginArray();
  for (uint64_t i = 0; i < count; ++i) {
    SourceRecord r;
    std::string_view name, url, state, last_error, library;
    if (!in.Pod(&r, "source") || !in.String(&name, "source name") ||
        !in.String(&url, "source url") || !in.String(&state, "source state") ||
        !in.String(&last_error, "source error") || !in.String(&library, "source library")) {
      return false;
    }
    w.BeginObject().Key("name").String(name).Key("url").String(url);
    w.Key("state").String(state).Key("age_ms");
    if (r.has_age) w.Int(r.age_ms);
    else w.Null();
    w.Key("last_error");
    if (last_error.empty()) w.Null();
    else w.String(last_error);
    w.Key("polls").Uint(r.polls).Key("failed_polls").Uint(r.failed);
    w.Key("series").Uint(r.series).Key("matched").Uint(r.matched);
    w.Key("library").String(library).EndObject();
  }
  w.EndArray();
  return true;
}

bool RenderBudget(ByteSource& in, JsonWriter& w) {
  BudgetRecord b;
  if (!in.Pod(&b, "budget")) return false;
  if (b.on > 1 || b.met > 1 || b.limited > 1) {
    return in.Fail(fmt::format("budget flags {}, {}, {} are not 0 or 1", b.on, b.met, b.limited));
  }
  w.Key("budget");
  if (!b.on) {
    w.Null();
    return true;
  }
  w.BeginObject().Key("max_error_rate").Double(b.max_error_rate);
  w.Key("target_fraction").Double(b.target_fraction).Key("window_ms").Int(b.window_ms);
  w.Key("observed_error_rate").Double(b.observed_error_rate);
  w.Key("window_results").Uint(b.window_results).Key("window_failures").Uint(b.window_failures);
  w.Key("error_cost").Double(b.error_cost).Key("met").Bool(b.met != 0);
  w.Key("limited").Bool(b.limited != 0).EndObject();
  return true;
}

bool RenderGuard(ByteSource& in, JsonWriter& w) {
  GuardRecord g;
  if (!in.Pod(&g, "guard")) return false;
  if (g.flags > 3) return in.Fail(fmt::format("guard flags {} are not a combination of 1 and 2", g.flags));
  w.Key("guard").BeginObject().Key("enabled").Bool(g.flags & 1);
  w.Key("headroom_known").Bool(g.flags & 2).Key("headroom_rps").Double(g.headroom_rps);
  w.Key("moved_rps").Double(g.moved_rps).Key("held").Uint(g.held).EndObject();
  return true;
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

std::string RenderSnapshot(std::string_view record, std::string* json) {
  // The JSON is about 2.5 times the record: one allocation, not a dozen doublings (pages
  // reserved and never written cost nothing).
  RecordRenderer r(std::move(*json), record.size() * 3 + 4096);
  const bool ok = r.Feed(record, true);
  *json = r.Take();
  return ok ? std::string() : r.error();
}

RecordRenderer::RecordRenderer(std::string buffer, size_t reserve) : w_(std::move(buffer)) {
  w_.Reserve(reserve);
}

RecordRenderer::RecordRenderer(JsonWriter::Malloced buffer) : w_(buffer) {}

RecordRenderer::~RecordRenderer() = default;

bool RecordRenderer::Feed(std::string_view bytes, bool last) {
  if (stage_ == Stage::kFailed) return false;
  ByteSource in(bytes);
  const bool ok = Render(in, last);
  if (!ok) {
    stage_ = Stage::kFailed;
    error_ = trailing_ ? fmt::format("{} bytes after the record's end", trailing_) : in.error();
  }
  return ok;
}

bool RecordRenderer::Render(ByteSource& in, bool last) {
  JsonWriter& w = w_;
  // A piece that is not the last ends between items: where it ends, the next one goes on.
  const auto wait = [&] { return !last && in.left() == 0; };
  for (;;) {
    switch (stage_) {
      case Stage::kHead: {
        if (wait()) return true;
        SnapshotHead head;
        std::string_view profile;
        if (!in.Pod(&head, "snapshot head") || !in.String(&profile, "profile") ||
            !in.Room(head.sources, sizeof(SourceRecord), "sources")) {
          return false;
        }
        now_ = head.now_ns;
        load_aware_ = head.load_aware != 0;
        w.BeginObject().Key("version").Uint(head.version).Key("time_ns").Int(head.now_ns);
        w.Key("clock").String(head.manual ? "manual" : "real").Key("profile").String(profile);
        w.Key("events").BeginObject().Key("total").Uint(head.events_total);
        w.Key("dropped").Uint(head.events_dropped).EndObject();
        // The metric sources the engine polls itself: freshness and the last error of each.
        if (!RenderSources(in, head.sources, w)) return false;
        w.Key("services").BeginArray();
        stage_ = Stage::kMarker;
        break;
      }
      case Stage::kMarker: {
        if (wait()) return true;
        uint64_t more;
        if (!in.Pod(&more, "service marker")) return false;
        if (more == kNoMoreServices) {
          w.EndArray().EndObject();
          stage_ = Stage::kDone;
          break;
        }
        if (more != kMoreServices) return in.Fail(fmt::format("service marker {}", more));
        ServiceRecord s;
        std::string_view name;
        if (!in.Pod(&s, "service") || !in.String(&name, "service name")) return false;
        // A whole record must hold every endpoint it claims (a hostile count is refused before
        // any loop runs over it); a piece holds those encoded so far.
        if (last && !in.Room(s.endpoints, sizeof(EndpointRecord), "endpoints")) return false;
        w.BeginObject().Key("name").String(name).Key("epoch").Uint(s.epoch);
        w.Key("panic").Bool(s.panic != 0).Key("stale_reports").Uint(s.stale_reports);
        w.Key("bad_load_reports").Uint(s.bad_load_reports);
        w.Key("removed_totals").BeginObject();
        for (int o = 0; o < kOutcomes; ++o) w.CodeKey(OutcomeName(o)).Uint(s.removed_totals[o]);
        w.EndObject();
        if (!RenderBudget(in, w) || !RenderGuard(in, w)) {
          in.Within(fmt::format("service {}", Quoted(name)));
          return false;
        }
        w.Key("subset");
        if (s.subset_size == 0) w.Null();
        else w.BeginObject().Key("size").Uint(s.subset_size).Key("of").Uint(s.subset_of).EndObject();
        w.Key("endpoints").BeginArray();
        service_.assign(name);
        endpoints_ = s.endpoints;
        next_ = 0;
        stage_ = Stage::kEndpoints;
        break;
      }
      case Stage::kEndpoints:
        for (; next_ < endpoints_; ++next_) {
          if (wait()) return true;
          if (!RenderEndpoint(in, now_, load_aware_, w)) {
            in.Within(fmt::format("endpoint {} of service {}", next_, Quoted(service_)));
            return false;
          }
        }
        w.EndArray().EndObject();
        stage_ = Stage::kMarker;
        break;
      case Stage::kDone:
        trailing_ = in.left();
        return trailing_ == 0;
      case Stage::kFailed:
        return false;
    }
  }
}

std::string RecordRenderer::Take() { return w_.Take(); }

}  // namespace weighted
