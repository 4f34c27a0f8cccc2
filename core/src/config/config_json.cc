// The config document: which keys exist where, their ranges, the checks that need more than
// one key, and the way back to JSON. The generic reading (positions, paths, types) is in
// config_reader.cc.
#include <initializer_list>

#include "config/config.h"
#include "config/config_reader.h"

namespace weighted {

namespace {

using namespace config_reader;

constexpr int64_t kDayMs = 86'400'000;  // no duration may exceed a day: typos, not intent
constexpr int64_t kMaxCount = 1'000'000;
constexpr size_t kMaxRules = 64;
// The resolved form of the largest valid document (64 rules, every number at full precision) is
// about 12 KiB (tests/cpp/fuzz_regressions_test.cc checks it), so it always fits this.
constexpr int64_t kMinConfigBytes = 16384;

constexpr std::string_view kTopKeys[] = {"$schema", "profile", "seed",      "controller",
                                         "window",  "rules",   "isolation", "panic",
                                         "slow_start", "picker", "events",  "limits"};
constexpr std::string_view kControllerKeys[] = {"interval_ms", "max_step", "cooldown_ms",
                                                "step_limit"};
constexpr std::string_view kWindowKeys[] = {"length_ms", "min_requests"};
constexpr std::string_view kRuleKeys[] = {"metric", "threshold", "threshold_ms", "relative",
                                          "penalty"};
constexpr std::string_view kIsolationKeys[] = {"probe_share", "probe_min_per_s",
                                               "exit_min_probes", "max_ms", "restore_fraction"};
constexpr std::string_view kPanicKeys[] = {"enabled", "threshold"};
constexpr std::string_view kSlowStartKeys[] = {"window_ms", "min_fraction", "aggression"};
constexpr std::string_view kPickerKeys[] = {"mode", "latency_decay_ms", "error_cost",
                                            "keepalive_share"};
constexpr std::string_view kEventsKeys[] = {"queue_capacity"};
constexpr std::string_view kLimitsKeys[] = {"max_config_bytes", "max_services",
                                            "max_endpoints_per_service", "max_latency_ms"};
constexpr std::pair<std::string_view, Keys> kKeyMap[] = {
    {"", kTopKeys},
    {"/controller", kControllerKeys},
    {"/window", kWindowKeys},
    {"/rules/N", kRuleKeys},
    {"/isolation", kIsolationKeys},
    {"/panic", kPanicKeys},
    {"/slow_start", kSlowStartKeys},
    {"/picker", kPickerKeys},
    {"/events", kEventsKeys},
    {"/limits", kLimitsKeys},
};

constexpr std::pair<std::string_view, StepLimit> kStepLimits[] = {
    {"increases_only", StepLimit::kIncreasesOnly}, {"both", StepLimit::kBoth}};
constexpr std::pair<std::string_view, PickMode> kPickModes[] = {
    {"weighted", PickMode::kWeighted}, {"load_aware", PickMode::kLoadAware}};
constexpr std::pair<std::string_view, bool> kProfiles[] = {{"default", false}, {"article", true}};

Metric ReadMetric(const Node& n) {
  std::pair<std::string_view, Metric> names[kMetricCount];
  for (int i = 0; i < kMetricCount; ++i) {
    names[i] = {MetricName(static_cast<Metric>(i)), static_cast<Metric>(i)};
  }
  return ReadEnum<Metric>(n, names);
}

Rule ReadRule(const Node& n) {
  n.ExpectObject(kRuleKeys);
  Rule r;
  r.metric = ReadMetric(n.Required("metric", "the window statistic the rule reads"));
  r.penalty = ReadDouble(n.Required("penalty", "added when the rule fires, in (0, 1]"),
                         kPositiveFraction);
  const std::string_view name = MetricName(r.metric);
  if (IsLatencyMetric(r.metric)) {
    // Two spellings so that a fraction can never be mistaken for milliseconds or the reverse.
    if (auto t = n.Get("threshold")) {
      t->Fail(fmt::format("{} is a latency metric: spell its absolute threshold \"threshold_ms\"",
                          name));
    }
    const auto absolute = n.Get("threshold_ms");
    const auto relative = n.Get("relative");
    if (!absolute && !relative) {
      n.Fail(fmt::format("a {} rule needs \"threshold_ms\", \"relative\" or both", name));
    }
    if (absolute) r.threshold = ReadDouble(*absolute, {0, kDayMs, true, false});
    // Below 1 the rule would fire on most healthy endpoints: the reference is their median.
    if (relative) r.relative = ReadDouble(*relative, {1, 1000});
  } else {
    for (std::string_view latency_only : {"threshold_ms", "relative"}) {
      if (auto t = n.Get(latency_only)) {
        t->Fail(fmt::format("only latency metrics take \"{}\"; {} takes \"threshold\", a "
                            "fraction in [0, 1]",
                            latency_only, name));
      }
    }
    r.threshold = ReadDouble(n.Required("threshold", "a fraction in [0, 1]"), kFraction);
  }
  return r;
}

std::vector<Rule> ReadRules(const Node& n) {
  if (!n.v().is_array()) n.Fail(fmt::format("must be an array of rules, got {}", Show(n.v())));
  if (n.v().size() > kMaxRules) {
    n.Fail(fmt::format("at most {} rules are allowed, got {}", kMaxRules, n.v().size()));
  }
  std::vector<Rule> rules;
  for (size_t i = 0; i < n.v().size(); ++i) rules.push_back(ReadRule(n.At(i)));
  return rules;
}

void ReadSections(const Node& root, Config& c) {
  if (auto n = root.Get("seed")) c.seed = ReadUint64(*n);
  if (auto s = root.Get("controller")) {
    s->ExpectObject(kControllerKeys);
    if (auto n = s->Get("interval_ms")) c.controller.interval_ms = ReadInt(*n, 10, kDayMs);
    if (auto n = s->Get("max_step")) c.controller.max_step = ReadDouble(*n, kPositiveFraction);
    if (auto n = s->Get("cooldown_ms")) c.controller.cooldown_ms = ReadInt(*n, 0, kDayMs);
    if (auto n = s->Get("step_limit")) {
      c.controller.step_limit = ReadEnum<StepLimit>(*n, kStepLimits);
    }
  }
  if (auto s = root.Get("window")) {
    s->ExpectObject(kWindowKeys);
    if (auto n = s->Get("length_ms")) c.window.length_ms = ReadInt(*n, 10, kDayMs);
    if (auto n = s->Get("min_requests")) c.window.min_requests = ReadInt(*n, 1, kMaxCount);
  }
  if (auto n = root.Get("rules")) c.rules = ReadRules(*n);
  if (auto s = root.Get("isolation")) {
    auto& i = c.isolation;
    s->ExpectObject(kIsolationKeys);
    if (auto n = s->Get("probe_share")) i.probe_share = ReadDouble(*n, kFraction);
    if (auto n = s->Get("probe_min_per_s")) i.probe_min_per_s = ReadDouble(*n, {0, 1000});
    if (auto n = s->Get("exit_min_probes")) i.exit_min_probes = ReadInt(*n, 1, kMaxCount);
    if (auto n = s->Get("max_ms")) i.max_ms = ReadInt(*n, 1, kDayMs);
    if (auto n = s->Get("restore_fraction")) i.restore_fraction = ReadDouble(*n, kPositiveFraction);
  }
  if (auto s = root.Get("panic")) {
    s->ExpectObject(kPanicKeys);
    if (auto n = s->Get("enabled")) c.panic.enabled = ReadBool(*n);
    if (auto n = s->Get("threshold")) c.panic.threshold = ReadDouble(*n, kFraction);
  }
  if (auto s = root.Get("slow_start")) {
    auto& ss = c.slow_start;
    s->ExpectObject(kSlowStartKeys);
    if (auto n = s->Get("window_ms")) ss.window_ms = ReadInt(*n, 0, kDayMs);
    if (auto n = s->Get("min_fraction")) ss.min_fraction = ReadDouble(*n, kPositiveFraction);
    if (auto n = s->Get("aggression")) ss.aggression = ReadDouble(*n, {0, kNoUpperBound, true});
  }
  if (auto s = root.Get("picker")) {
    s->ExpectObject(kPickerKeys);
    if (auto n = s->Get("mode")) c.picker.mode = ReadEnum<PickMode>(*n, kPickModes);
    if (auto n = s->Get("latency_decay_ms")) c.picker.latency_decay_ms = ReadInt(*n, 1, kDayMs);
    if (auto n = s->Get("error_cost")) c.picker.error_cost = ReadDouble(*n, {0, 1e6});
    if (auto n = s->Get("keepalive_share")) c.picker.keepalive_share = ReadDouble(*n, kFraction);
  }
  if (auto s = root.Get("events")) {
    s->ExpectObject(kEventsKeys);
    if (auto n = s->Get("queue_capacity")) c.events.queue_capacity = ReadInt(*n, 1, kMaxCount);
  }
  if (auto s = root.Get("limits")) {
    auto& l = c.limits;
    s->ExpectObject(kLimitsKeys);
    // Can only be lowered: the size check runs before the document is read, so it has to use
    // the built-in limit. Nor below kMinConfigBytes, or the resolved form of the document
    // (wt_config_resolve) could exceed the limit it states and be refused (found by
    // fuzz/config_fuzz.cc: {"limits": {"max_config_bytes": 100}} resolved to 1079 bytes).
    if (auto n = s->Get("max_config_bytes")) {
      l.max_config_bytes = ReadInt(*n, kMinConfigBytes, Config::Limits{}.max_config_bytes);
    }
    if (auto n = s->Get("max_services")) l.max_services = ReadInt(*n, 1, kMaxCount);
    if (auto n = s->Get("max_endpoints_per_service")) {
      l.max_endpoints_per_service = ReadInt(*n, 1, kMaxCount);
    }
    if (auto n = s->Get("max_latency_ms")) l.max_latency_ms = ReadDouble(*n, {0, kDayMs, true});
  }
}

// A contradiction involves several keys; blame the first of `paths` the document sets (the
// profiles are consistent, so the document sets at least one of them).
[[noreturn]] void Contradiction(const json& doc, std::initializer_list<std::string> paths,
                                std::string message) {
  for (const std::string& p : paths) {
    if (doc.contains(json::json_pointer(p))) {
      throw ConfigReadError{WT_ERR_CONFIG_INVALID, p, std::move(message)};
    }
  }
  throw ConfigReadError{WT_ERR_CONFIG_INVALID, *paths.begin(), std::move(message)};
}

void CheckConsistency(const json& doc, const Config& c) {
  if (c.window.length_ms < c.controller.interval_ms) {
    Contradiction(doc, {"/window/length_ms", "/controller/interval_ms"},
                  fmt::format("window.length_ms ({}) is shorter than controller.interval_ms ({}); "
                              "each cycle judges the last window, so results arriving between "
                              "two windows would never count toward any decision",
                              c.window.length_ms, c.controller.interval_ms));
  }
  // Each endpoint keeps one sample per cycle of its window: bound the count, so a config cannot
  // ask for millions of samples per endpoint (10 ms cycles over a day would be 8.64 million).
  constexpr int64_t kMaxWindowSlots = 1000;
  if (c.window.length_ms > kMaxWindowSlots * c.controller.interval_ms) {
    Contradiction(doc, {"/window/length_ms", "/controller/interval_ms"},
                  fmt::format("window.length_ms ({}) spans more than {} controller cycles of "
                              "controller.interval_ms ({}); every endpoint keeps one sample per "
                              "cycle of its window, so lengthen the interval or shorten the window",
                              c.window.length_ms, kMaxWindowSlots, c.controller.interval_ms));
  }
  if (c.isolation.max_ms < c.controller.interval_ms) {
    Contradiction(doc, {"/isolation/max_ms", "/controller/interval_ms"},
                  fmt::format("isolation.max_ms ({}) is shorter than controller.interval_ms ({}); "
                              "isolation is reviewed once per cycle, so every isolation would end "
                              "in a forced restore before a single probe result was judged",
                              c.isolation.max_ms, c.controller.interval_ms));
  }
  const double guaranteed_probes =
      c.isolation.probe_min_per_s * static_cast<double>(c.window.length_ms) / 1000.0;
  if (c.isolation.probe_share == 0 && guaranteed_probes < c.isolation.exit_min_probes) {
    Contradiction(doc,
                  {"/isolation/exit_min_probes", "/isolation/probe_min_per_s",
                   "/isolation/probe_share", "/window/length_ms"},
                  fmt::format("with probe_share 0 an isolated endpoint is only guaranteed "
                              "probe_min_per_s x window.length_ms = {} probes per window, fewer "
                              "than exit_min_probes ({}): it could never leave isolation on "
                              "healthy probes (S-S3)",
                              guaranteed_probes, c.isolation.exit_min_probes));
  }
  for (size_t i = 0; i < c.rules.size(); ++i) {
    const Rule& r = c.rules[i];
    if (IsLatencyMetric(r.metric) && r.threshold > c.limits.max_latency_ms) {
      Contradiction(doc, {fmt::format("/rules/{}/threshold_ms", i), "/limits/max_latency_ms"},
                    fmt::format("rules[{}].threshold_ms ({}) is above limits.max_latency_ms ({}): "
                                "latencies that high are rejected as absurd, so the rule could "
                                "never fire",
                                i, r.threshold, c.limits.max_latency_ms));
    }
  }
}

Config ReadConfig(std::string_view text) {
  const json doc = ParseDocument(text);
  const Node root(doc, "", kKeyMap);
  root.ExpectObject(kTopKeys);
  if (auto n = root.Get("$schema"); n && !n->v().is_string()) {
    n->Fail(fmt::format("must be a string, got {}", Show(n->v())));
  }
  bool article = false;
  if (auto n = root.Get("profile")) article = ReadEnum<bool>(*n, kProfiles);
  Config c = article ? ArticleConfig() : DefaultConfig();
  ReadSections(root, c);
  CheckConsistency(doc, c);
  if (text.size() > c.limits.max_config_bytes) {
    throw ConfigReadError{WT_ERR_LIMIT, "/limits/max_config_bytes",
                          fmt::format("this document is {} bytes, more than the {} it allows",
                                      text.size(), c.limits.max_config_bytes)};
  }
  return c;
}

}  // namespace

Status ParseConfig(std::string_view text, Config* out) {
  if (out == nullptr) return InvalidArgument("ParseConfig: out is NULL");
  const size_t limit = Config::Limits{}.max_config_bytes;
  if (text.size() > limit) {
    return {WT_ERR_LIMIT, fmt::format("config is {} bytes, over the limit of {} bytes "
                                      "(limits.max_config_bytes)",
                                      text.size(), limit)};
  }
  try {
    *out = ReadConfig(text);
    return Status::Ok();
  } catch (const ConfigReadError& e) {
    if (e.code == WT_ERR_CONFIG_PARSE) return {e.code, e.message};
    return {e.code, fmt::format("{}: {}", e.path.empty() ? "(document)" : e.path, e.message)};
  } catch (const std::bad_alloc&) {
    return {WT_ERR_NO_MEMORY, "out of memory while reading the config"};
  } catch (const std::exception& e) {
    return {WT_ERR_INTERNAL, fmt::format("unexpected error reading the config: {}", e.what())};
  }
}

std::string ConfigToJson(const Config& c) {
  using ojson = nlohmann::ordered_json;  // keeps the documented key order
  ojson rules = ojson::array();
  for (const Rule& r : c.rules) {
    ojson rule = {{"metric", MetricName(r.metric)}};
    if (IsLatencyMetric(r.metric)) {
      if (r.threshold >= 0) rule["threshold_ms"] = r.threshold;
      if (r.relative > 0) rule["relative"] = r.relative;
    } else {
      rule["threshold"] = r.threshold;
    }
    rule["penalty"] = r.penalty;
    rules.push_back(std::move(rule));
  }
  ojson j;
  j["profile"] = c.profile;
  j["seed"] = c.seed;
  j["controller"] = {{"interval_ms", c.controller.interval_ms},
                     {"max_step", c.controller.max_step},
                     {"cooldown_ms", c.controller.cooldown_ms},
                     {"step_limit", EnumName<StepLimit>(c.controller.step_limit, kStepLimits)}};
  j["window"] = {{"length_ms", c.window.length_ms}, {"min_requests", c.window.min_requests}};
  j["rules"] = std::move(rules);
  j["isolation"] = {{"probe_share", c.isolation.probe_share},
                    {"probe_min_per_s", c.isolation.probe_min_per_s},
                    {"exit_min_probes", c.isolation.exit_min_probes},
                    {"max_ms", c.isolation.max_ms},
                    {"restore_fraction", c.isolation.restore_fraction}};
  j["panic"] = {{"enabled", c.panic.enabled}, {"threshold", c.panic.threshold}};
  j["slow_start"] = {{"window_ms", c.slow_start.window_ms},
                     {"min_fraction", c.slow_start.min_fraction},
                     {"aggression", c.slow_start.aggression}};
  j["picker"] = {{"mode", EnumName<PickMode>(c.picker.mode, kPickModes)},
                 {"latency_decay_ms", c.picker.latency_decay_ms},
                 {"error_cost", c.picker.error_cost},
                 {"keepalive_share", c.picker.keepalive_share}};
  j["events"] = {{"queue_capacity", c.events.queue_capacity}};
  j["limits"] = {{"max_config_bytes", c.limits.max_config_bytes},
                 {"max_services", c.limits.max_services},
                 {"max_endpoints_per_service", c.limits.max_endpoints_per_service},
                 {"max_latency_ms", c.limits.max_latency_ms}};
  return j.dump(2);
}

}  // namespace weighted
