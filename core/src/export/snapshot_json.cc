#include "export/snapshot_json.h"

#include "export/json_writer.h"

namespace weighted {

namespace {

void WindowJson(const WindowStats& s, JsonWriter& w) {
  w.BeginObject().Key("requests").Uint(s.requests);
  w.Key("errors").BeginObject();
  for (int o = 1; o < kOutcomes; ++o) w.Key(OutcomeName(o)).Uint(s.outcomes[o]);
  w.EndObject();
  w.Key("error_rate").Double(s.error_rate);
  w.Key("mean_ms").Double(s.mean_ms).Key("p95_ms").Double(s.p95_ms).Key("p99_ms").Double(s.p99_ms);
  w.Key("resources").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    w.Key(ResourceName(i));
    if (s.resource_known[i]) w.Double(s.resources[i]);
    else w.Null();
  }
  // Which report each value the rules read came from, and the servers' own window averages.
  w.EndObject().Key("resource_origin").BeginObject();
  for (int i = 0; i < kResources; ++i) w.Key(ResourceName(i)).String(OriginName(s.resource_origin[i]));
  w.EndObject().Key("server_resources").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    w.Key(ResourceName(i));
    if (s.server_known[i]) w.Double(s.server_resources[i]);
    else w.Null();
  }
  w.EndObject().EndObject();
}

// The servers' reports on this endpoint: how many, how many refused, the last rates and ages.
void ServerReportJson(const HotStats& h, int64_t now, JsonWriter& w) {
  const auto age = [&](int64_t at) -> JsonWriter& {
    return at == INT64_MIN ? w.Null() : w.Int((now - at) / kNsPerMs);
  };
  w.BeginObject().Key("reports").Uint(h.server_reports()).Key("malformed").Uint(h.bad_reports());
  const HotStats::ServerRates r = h.Rates();
  w.Key("rps");
  if (r.has_rps) w.Double(r.rps);
  else w.Null();
  w.Key("eps");
  if (r.has_eps) w.Double(r.eps);
  else w.Null();
  w.Key("rates_age_ms");
  age(r.at_ns);
  w.Key("age_ms").BeginObject();
  for (int i = 0; i < kResources; ++i) {
    w.Key(ResourceName(i));
    age(h.ServerReportedAt(i));
  }
  w.EndObject().EndObject();
}

void EndpointJson(const Endpoint& ep, const Evaluation& eval, uint32_t index, int64_t now,
                  bool load_aware, JsonWriter& w) {
  const ControlState& c = ep.ctl;
  w.BeginObject().Key("id").String(ep.id).Key("index").Uint(index).Key("key").Uint(ep.key);
  w.Key("state").String(StateName(c.state)).Key("known").Bool(c.known);
  w.Key("slow_start").Bool(c.slow_start).Key("base_weight").Double(c.base);
  w.Key("weight").Double(c.weight).Key("target").Double(c.target);
  w.Key("effective_weight").Double(c.effective).Key("penalty").Double(c.penalty);
  w.Key("rules").BeginArray();
  for (const RuleHit& h : eval.hits) {
    w.BeginObject().Key("metric").String(MetricName(h.metric)).Key("value");
    if (h.evaluated) w.Double(h.value);
    else w.Null();
    w.Key("threshold").Double(h.threshold).Key("penalty").Double(h.penalty);
    w.Key("fired").Bool(h.fired).Key("contribution").Double(h.fired ? h.penalty : 0.0);
    w.EndObject();
  }
  w.EndArray();
  w.Key("window");
  WindowJson(c.stats, w);
  w.Key("server_report");
  ServerReportJson(ep.stats, now, w);
  w.Key("inflight").Int(ep.load.InFlight());
  // What the traffic did in the last cycle, beside what the weights say (they differ in the
  // load-aware mode, where the cost comparison picks among candidates drawn by weight).
  w.Key("share").BeginObject().Key("last_cycle").Double(c.share);
  w.Key("results").Uint(c.cycle_results).EndObject();
  w.Key("picker");
  if (load_aware) {
    w.BeginObject().Key("inflight").Int(c.picker.inflight);
    w.Key("latency_ms").Double(c.picker.latency_ms);
    w.Key("failure_share").Double(c.picker.failure_share).EndObject();
  } else {
    w.Null();
  }
  w.Key("isolated_for_ms")
      .Int(c.state == State::kIsolated ? (now - c.isolated_since_ns) / kNsPerMs : 0);
  w.Key("forced_restores").Uint(c.forced_restores);
  w.Key("totals").BeginObject();
  for (int o = 0; o < kOutcomes; ++o) w.Key(OutcomeName(o)).Uint(ep.stats.Lifetime(o));
  w.EndObject().EndObject();
}

}  // namespace

std::string SnapshotJson(Engine& engine) {
  std::string out;
  SnapshotJsonInto(engine, &out, nullptr, nullptr);
  return out;
}

void SnapshotJsonInto(Engine& engine, std::string* snapshot, const HistoryPointHeader* header,
                      std::string* point) {
  engine.CollectRetired();  // settles the totals of removed endpoints that no reader holds
  const int64_t now = engine.Now();
  auto cfg = engine.config();
  const bool load_aware = cfg->picker.mode == PickMode::kLoadAware;
  JsonWriter w(std::move(*snapshot));
  JsonWriter pw(point ? std::move(*point) : std::string());
  HistoryPointWriter hp(pw);
  const bool with_point = point && header;
  if (with_point) hp.Begin(*header);
  w.BeginObject().Key("version").Uint(WT_VERSION_NUMBER).Key("time_ns").Int(now);
  w.Key("clock").String(engine.manual() ? "manual" : "real").Key("profile").String(cfg->profile);
  w.Key("events").BeginObject().Key("total").Uint(engine.events().total());
  w.Key("dropped").Uint(engine.events().dropped()).EndObject();
  // The metric sources the engine polls itself: freshness and the last error of each.
  w.Key("sources").BeginArray();
  for (const SourceView& v : engine.Sources()) {
    w.BeginObject().Key("name").String(v.name).Key("url").String(v.url);
    w.Key("state").String(v.state).Key("age_ms");
    if (v.age_ms) w.Int(*v.age_ms);
    else w.Null();
    w.Key("last_error");
    if (v.last_error.empty()) w.Null();
    else w.String(v.last_error);
    w.Key("polls").Uint(v.polls).Key("failed_polls").Uint(v.failed);
    w.Key("series").Uint(v.series).Key("matched").Uint(v.matched);
    w.Key("library").String(v.library).EndObject();
  }
  w.EndArray();
  w.Key("services").BeginArray();
  engine.ForEachService([&](Service& svc) {
    svc.Inspect([&](Service& s) {
      w.BeginObject().Key("name").String(s.name()).Key("epoch").Uint(s.epoch());
      w.Key("panic").Bool(s.panic()).Key("stale_reports").Uint(s.stale_reports());
      w.Key("bad_load_reports").Uint(s.bad_load_reports());
      w.Key("removed_totals").BeginObject();
      for (int o = 0; o < kOutcomes; ++o) w.Key(OutcomeName(o)).Uint(s.removed_total(o));
      w.EndObject().Key("endpoints").BeginArray();
      if (with_point) hp.BeginService(s.name(), s.panic());
      for (uint32_t i = 0; i < s.endpoints().size(); ++i) {
        const Endpoint& ep = *s.endpoints()[i];
        EndpointJson(ep, s.EvaluationOf(ep), i, now, load_aware, w);
        // The point's columns are the snapshot's "effective_weight", "share.last_cycle" and
        // "penalty" of the same endpoint; the engine has no expected share (null).
        if (with_point) {
          const ControlState& c = ep.ctl;
          hp.Endpoint(ep.id, StateName(c.state), c.effective, std::nullopt, c.share, c.penalty);
        }
      }
      if (with_point) hp.EndService();
      w.EndArray().EndObject();
    });
  });
  w.EndArray().EndObject();
  if (with_point) hp.End();
  *snapshot = w.Take();
  if (point) *point = pw.Take();
}

}  // namespace weighted
