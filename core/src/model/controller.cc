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
      R"({{"penalty":{:.6g},"requests":{},"known":{},"rules":[{}],"share":{:.6g},"picker":{}}})",
      eval.penalty, c.stats.requests, c.known, rules, c.share, picker);
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
  Evaluate(x.cfg.rules, c.stats, c.known, x.ref, &eval);
  x.events->push_back({type, x.now, x.id, old_w, new_w, ReasonJson(c, eval, x.cfg.picker.mode == PickMode::kLoadAware)});
}

// Leaves isolation on healthy probes, or by force when max isolation time runs out (S-P2).
void StepIsolated(const StepContext& x, ControlState& c) {
  const Config& cfg = x.cfg;
  const int64_t now = x.now;
  if (now - c.isolated_since_ns >= cfg.isolation.max_ms * kNsPerMs) {
    c.weight = cfg.isolation.restore_fraction * c.base;
    c.state = State::kRecovering;
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
    Emit(x, WT_EVENT_RESTORED, c, 0, c.weight);
  }
}

}  // namespace

void JudgeFleet(const Config& cfg, const std::vector<ControlState*>& endpoints, Judgement* judged) {
  std::vector<const WindowStats*> known;
  for (ControlState* c : endpoints) {
    // An isolated endpoint is judged on its probes alone, so it needs only enough of them to
    // leave; it never counts toward the reference its healthy peers are compared with.
    const uint64_t needed = c->state == State::kIsolated ? cfg.isolation.exit_min_probes
                                                         : cfg.window.min_requests;
    c->known = c->stats.requests >= needed;
    if (c->known && c->state != State::kIsolated) known.push_back(&c->stats);
  }
  judged->ref = ComputeReference(known);
  judged->rules = cfg.rules;
  for (ControlState* c : endpoints) {
    c->penalty = Penalty(cfg.rules, c->stats, c->known, judged->ref);
    c->judged = true;
  }
}

void StepEndpoint(const Config& cfg, const ServiceReference& ref, int64_t now,
                  const std::string& id, ControlState& c, std::vector<PendingEvent>* ev) {
  const StepContext x{cfg, ref, now, id, ev};
  const double penalty = c.penalty;
  c.target = c.base * (1 - std::min(penalty, 1.0));
  if (c.state == State::kIsolated) return StepIsolated(x, c);

  if (penalty >= 1 && c.may_isolate) {
    const double old = c.weight;
    c.state = State::kIsolated;
    c.isolated_since_ns = now;
    c.weight = 0;
    c.last_change_ns = now;
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
  if (target < w) {
    // Default profile: a cut acts at once, since every cycle spent on a sick endpoint costs
    // errors; the article profile steps down like it steps up (docs/algorithm.md).
    if (!both) w = target;
    else if (cooled) w = std::max(target, w - step);
  } else if (c.target > w && cooled) {
    w = std::min(c.target, w + step);
  }
  if (w != c.weight) {
    const double old = c.weight;
    c.weight = w;
    // The cooldown holds a weight after a cut (anti-flap). Increases are already limited to
    // one step per cycle; only the article profile also waits the cooldown between them.
    if (w < old || both) c.last_change_ns = now;
    Emit(x, WT_EVENT_WEIGHT_CHANGED, c, old, w);
  }
  c.state = penalty > 0 ? State::kDegraded
          : c.weight < c.base ? State::kRecovering
          : State::kHealthy;
}

}  // namespace weighted
