#include "model/controller.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/clock.h"

namespace weighted {

std::string ReasonJson(const ControlState& c, const Evaluation& eval, bool load_aware) {
  std::string rules;
  for (const RuleHit& h : eval.hits) {
    if (!h.fired) continue;
    if (!rules.empty()) rules += ',';
    rules += fmt::format(R"({{"metric":"{}","value":{:.6g},"threshold":{:.6g},"penalty":{:.6g}}})",
                         MetricName(h.metric), h.value, h.threshold, h.penalty);
  }
  // The picker's evidence beside the rules: in the load-aware mode the cost comparison moves the
  // traffic, so a weight alone does not say why an endpoint got the share it got.
  std::string picker = "null";
  if (load_aware) {
    picker = fmt::format(R"({{"inflight":{},"latency_ms":{:.6g},"failure_share":{:.6g}}})",
                         c.picker.inflight, c.picker.latency_ms, c.picker.failure_share);
  }
  return fmt::format(
      R"({{"penalty":{:.6g},"requests":{},"known":{},"rules":[{}],"share":{:.6g},"picker":{},)"
      R"("state":"{}","evidence":"{}","failing":{:.6g}}})",
      eval.penalty, c.stats.requests, c.known, rules, c.share, picker, StateName(c.state),
      EvidenceName(c.evidence), eval.failing);
}

double SlowStartFactor(const Config& cfg, int64_t added_ns, int64_t now_ns) {
  const auto& ss = cfg.slow_start;
  if (ss.window_ms <= 0) return 1;
  const double window_ns = double(ss.window_ms) * kNsPerMs;
  const double t = double(now_ns - added_ns);
  if (t >= window_ns) return 1;
  // Envoy: time_factor = max(t, 1 s) / window; weight x max(min, time_factor^(1/aggression)).
  const double tf = std::max(t, 1e9) / window_ns;
  return std::clamp(std::pow(tf, 1.0 / ss.aggression), ss.min_fraction, 1.0);
}

namespace {

// What StepEndpoint needs besides the endpoint: the config and reference the endpoint was
// judged against (to explain the judgement in events) and where events go.
struct StepContext {
  const Config& cfg;
  const ServiceReference& ref;
  int64_t now;
  const std::string& id;
  std::vector<PendingEvent>* events;
};

void Emit(const StepContext& x, wt_event_type type, const ControlState& c, double old_w,
          double new_w) {
  Evaluation eval;  // recomputed: events are rare, and keeping every hit cost memory per endpoint
  Evaluate(x.cfg.rules, c.Judged(), c.HasEvidence(), x.ref, &eval);
  x.events->push_back({type, x.now, x.id, old_w, new_w, ReasonJson(c, eval, x.cfg.picker.mode == PickMode::kLoadAware)});
}

// Too few results to judge: the last full window, worth min_requests results and halved every
// evidence_half_life_ms, pooled with the results since. An endpoint the picker starves because
// it fails keeps that evidence, and the keep-alive picks and probes it still gets refresh it
// (their failures keep it failing; their successes dilute it), where forgetting it made the
// endpoint unknown and let its weight climb back while it still failed.
bool Blend(const Config& cfg, int64_t now, ControlState* c) {
  if (cfg.window.evidence_half_life_ms <= 0) return false;
  const WindowStats& s = c->stats;
  const uint64_t probes = cfg.isolation.exit_min_probes;
  const uint64_t failed = s.requests - s.outcomes[WT_OUTCOME_SUCCESS];
  // Clean probes refute what is held, as they end an isolation: judged afresh from here.
  if (s.requests >= probes && failed == 0) c->has_held = false;
  // Nothing held (a newcomer failing from its first requests): its failures are evidence once
  // there are as many as an isolation's exit needs, or the picker would starve it unjudged.
  if (!c->has_held && failed < probes) return false;
  double held = 0;
  if (c->has_held) {
    const double age =
        double(now - c->held_ns) / (double(cfg.window.evidence_half_life_ms) * kNsPerMs);
    held = double(cfg.window.min_requests) * std::exp2(-std::max(age, 0.0));
  }
  const WindowStats& h = c->held;
  const double n = double(s.requests);
  if (held + n < double(probes)) return false;  // faded: unknown
  WindowStats b = s;
  // Rates as pooled counts, scaled so that the held window's fractional weight survives the
  // integer counters; `requests` is the pooled evidence, rounded.
  constexpr double kScale = 1000;
  uint64_t total = 0;
  for (int o = 0; o < kOutcomes; ++o) {
    const double held_o = h.requests ? held * double(h.outcomes[o]) / double(h.requests) : 0;
    b.outcomes[o] = static_cast<uint64_t>(std::llround(kScale * (held_o + double(s.outcomes[o]))));
    total += b.outcomes[o];
  }
  b.error_rate = total ? double(total - b.outcomes[WT_OUTCOME_SUCCESS]) / double(total) : 0;
  // Rate() divides by requests: keep them on the same scale as the outcomes.
  b.requests = total;
  if (s.latency_samples == 0) {
    b.latency_samples = h.latency_samples;
    b.mean_ms = h.mean_ms;
    b.p95_ms = h.p95_ms;
    b.p99_ms = h.p99_ms;
  }
  c->blend = b;
  return true;
}

// The window fires, but the last cycle's own results (as many as an isolation's exit needs) fire
// nothing: for a cut made to a healthy endpoint in the last burst_ms, the burst is over; for an
// endpoint still healthy at base, the evidence sits in the window's older half only and has
// cleared (a stall's timeouts, weighed against the few results the picker sent it after).
bool BurstCleared(const Config& cfg, const ServiceReference& ref, int64_t now, ControlState* c) {
  if (cfg.controller.burst_ms <= 0 || c->state == State::kIsolated) return false;
  const bool pending = c->burst_from > 0 && now - c->burst_ns <= cfg.controller.burst_ms * kNsPerMs;
  if (c->burst_from > 0 && !pending) c->burst_from = 0;
  const bool healthy = c->state == State::kHealthy && c->weight >= c->base;
  if (!pending && !healthy) return false;
  WindowStats last = c->window.Compute(1);
  if (last.requests < cfg.isolation.exit_min_probes) return false;
  // Resources are window averages resolved between client and server reports; a burst is
  // about answers, so the last cycle keeps the window's.
  last.resources = c->stats.resources;
  last.resource_known = c->stats.resource_known;
  last.resource_origin = c->stats.resource_origin;
  // Nor is the server's own error rate this client's burst: over every client's requests, it
  // still says what the endpoint fails when this client's few answers in a cycle were clean.
  last.server_error_rate = c->stats.server_error_rate;
  last.server_error_known = c->stats.server_error_known;
  last.server_latency_ms = c->stats.server_latency_ms;
  last.server_latency_known = c->stats.server_latency_known;
  if (Penalty(cfg.rules, last, true, ref) > 0) return false;
  c->blend = last;
  return true;
}

// The state the judgement reads: failing when rate rules fire, degraded when only others do.
State JudgedState(const ControlState& c) {
  if (c.penalty > 0) return c.failing > 0 ? State::kFailing : State::kDegraded;
  return c.weight < c.base ? State::kRecovering : State::kHealthy;
}

// Leaves isolation on healthy probes, or by force when max isolation time runs out (S-P2).
void StepIsolated(const StepContext& x, ControlState& c) {
  const Config& cfg = x.cfg;
  const int64_t now = x.now;
  if (now - c.isolated_since_ns >= cfg.isolation.max_ms * kNsPerMs) {
    c.weight = cfg.isolation.restore_fraction * c.base;
    // Forced back without healthy probes: what the probes showed is what it is judged on next
    // (held), and while they fail it reads failing, not recovering.
    c.state = c.known && c.failing > 0 ? State::kFailing : State::kRecovering;
    if (c.known) {
      c.held = c.stats;
      c.held_ns = now;
      c.has_held = true;
    }
    c.last_change_ns = now;
    ++c.forced_restores;
    c.window.Clear();  // judge the restored endpoint on what it does from now on
    Emit(x, WT_EVENT_FORCED_RESTORE, c, 0, c.weight);
    return;
  }
  // The window was cleared on entry, so it holds probe results only.
  if (c.known && c.penalty < 1) {
    c.weight = std::min(c.target, cfg.controller.max_step * c.base);
    c.state = State::kRecovering;
    c.last_change_ns = now;
    c.has_held = false;  // the probes are the evidence now
    Emit(x, WT_EVENT_RESTORED, c, 0, c.weight);
  }
}

}  // namespace

void JudgeFleet(const Config& cfg, int64_t now, const std::vector<ControlState*>& endpoints,
                Judgement* judged) {
  std::vector<const WindowStats*> known, reporting;
  for (ControlState* c : endpoints) {
    // An isolated endpoint is judged on its probes alone, so it needs only enough of them to
    // leave; it never counts toward the reference its healthy peers are compared with.
    const bool isolated = c->state == State::kIsolated;
    if (!isolated) reporting.push_back(&c->stats);
    const uint64_t needed = isolated ? cfg.isolation.exit_min_probes : cfg.window.min_requests;
    c->known = c->stats.requests >= needed;
    c->evidence = c->known ? Evidence::kWindow : Evidence::kNone;
    if (c->known && !isolated) {
      known.push_back(&c->stats);
      c->held = c->stats;
      c->held_ns = now;
      c->has_held = true;
    } else if (!c->known && !isolated && Blend(cfg, now, c)) {
      c->evidence = Evidence::kHeld;
    }
  }
  judged->ref = ComputeReference(known, reporting);
  judged->rules = cfg.rules;
  for (ControlState* c : endpoints) {
    c->penalty = Penalty(cfg.rules, c->Judged(), c->HasEvidence(), judged->ref, &c->failing);
    if (c->penalty > 0 && c->evidence == Evidence::kWindow &&
        BurstCleared(cfg, judged->ref, now, c)) {
      c->evidence = Evidence::kLastCycle;
      c->penalty = c->failing = 0;
    }
    c->judged = true;
  }
}

void StepEndpoint(const Config& cfg, const ServiceReference& ref, int64_t now,
                  const std::string& id, ControlState& c, std::vector<PendingEvent>* ev) {
  const StepContext x{cfg, ref, now, id, ev};
  const double penalty = c.penalty;
  const State before = c.state;
  c.target = c.base * (1 - std::min(penalty, 1.0));
  if (c.state == State::kIsolated) return StepIsolated(x, c);

  if (penalty >= 1 && c.may_isolate) {
    const double old = c.weight;
    c.state = State::kIsolated;
    c.isolated_since_ns = now;
    c.weight = 0;
    c.last_change_ns = now;
    c.burst_from = 0;
    Emit(x, WT_EVENT_ISOLATED, c, old, 0);
    c.window.Clear();
    return;
  }

  const bool both = cfg.controller.step_limit == StepLimit::kBoth;
  const double step = cfg.controller.max_step * c.base;
  const bool cooled = now - c.last_change_ns >= cfg.controller.cooldown_ms * kNsPerMs;
  double w = c.weight;
  // The capacity guard may hold a cut above its target this cycle (model/guard.h).
  const double target = std::max(c.target, std::min(c.floor, c.weight));
  if (c.evidence == Evidence::kLastCycle) {
    // A burst's cut, undone at once: a healthy endpoint that stalled once is not made to climb
    // back over the window and the cooldown (docs/algorithm.md, "Bursts").
    w = std::max(w, std::min(c.target, c.burst_from));
    c.burst_from = 0;
  } else if (target < w) {
    // Default profile: a cut acts at once, since every cycle spent on a sick endpoint costs
    // errors; the article profile steps down like it steps up (docs/algorithm.md).
    if (!both) w = target;
    else if (cooled) w = std::max(target, w - step);
    if (before == State::kHealthy && cfg.controller.burst_ms > 0 && c.burst_from <= 0) {
      c.burst_from = c.weight;
      c.burst_ns = now;
    }
  } else if (c.target > w && cooled) {
    w = std::min(c.target, w + step);
  }
  const bool weight_changed = w != c.weight;
  const double old = c.weight;
  c.weight = w;
  c.state = JudgedState(c);
  if (weight_changed) {
    // The cooldown holds a weight after a cut (anti-flap). Increases are already limited to
    // one step per cycle; only the article profile also waits the cooldown between them.
    if (w < old || both) c.last_change_ns = now;
    Emit(x, WT_EVENT_WEIGHT_CHANGED, c, old, w);
  }
  if (c.state != before) Emit(x, WT_EVENT_STATE_CHANGED, c, old, w);
}

}  // namespace weighted
