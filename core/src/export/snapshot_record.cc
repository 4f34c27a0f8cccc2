// The record read back, as a hostile input, and rendered as the snapshot JSON (RenderSnapshot,
// RecordRenderer); the engine's side that writes it is snapshot_encode.cc.
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

constexpr int kStates = 5;   // State::kHealthy .. kFailing
// The failure share at which the default price (picker.error_cost 500) doubles a cost.
constexpr double kPricedOut = 1.0 / 500;
constexpr int kOrigins = 3;  // ResourceOrigin::kNone .. kServer

// (now - at) in milliseconds. Wrapping, so that a hostile record's times cannot overflow; for
// any times an engine holds it is the plain difference.
int64_t AgeMs(int64_t now, int64_t at) {
  return static_cast<int64_t>(static_cast<uint64_t>(now) - static_cast<uint64_t>(at)) / kNsPerMs;
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
