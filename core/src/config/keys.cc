// The table of config keys. Defaults are not here: they are Config's initialisers (the default
// profile) and ArticleConfig()'s overrides, which say why; this table says what a key is.
#include "config/keys.h"

#include <stdexcept>

namespace weighted::config_keys {

namespace {

using config_reader::kFraction;
using config_reader::kNoUpperBound;
using config_reader::kPositiveFraction;

constexpr int64_t kDayMs = 86'400'000;  // no duration may exceed a day: typos, not intent
constexpr int64_t kMaxCount = 1'000'000;
// max_config_bytes can only be lowered: the size check runs before the document is read, so it
// has to use the built-in limit. Nor below this, or the resolved form of the document
// (wt_config_resolve) could exceed the limit it states and be refused (found by
// fuzz/config_fuzz.cc: {"limits": {"max_config_bytes": 100}} resolved to 1079 bytes). The
// resolved form of the largest valid document (64 rules, every number at full precision) is
// about 12 KiB (tests/cpp/fuzz_regressions_test.cc checks it), so it always fits.
constexpr int64_t kMinConfigBytes = 16384;
constexpr auto kBuiltInConfigBytes = static_cast<int64_t>(Config::Limits{}.max_config_bytes);

// Indexed by the enums' values, which the static_asserts pin.
constexpr std::string_view kStepLimitNames[] = {"increases_only", "both"};
static_assert(static_cast<int>(StepLimit::kIncreasesOnly) == 0);
static_assert(static_cast<int>(StepLimit::kBoth) == 1);
constexpr std::string_view kPickModeNames[] = {"weighted", "load_aware"};
static_assert(static_cast<int>(PickMode::kWeighted) == 0);
static_assert(static_cast<int>(PickMode::kLoadAware) == 1);
constexpr std::string_view kResourceSourceNames[] = {"server", "client"};
static_assert(static_cast<int>(ResourceSource::kServer) == 0);
static_assert(static_cast<int>(ResourceSource::kClient) == 1);
constexpr std::string_view kSubsetModeNames[] = {"off", "fixed", "auto"};
static_assert(static_cast<int>(SubsetMode::kOff) == 0);
static_assert(static_cast<int>(SubsetMode::kFixed) == 1);
static_assert(static_cast<int>(SubsetMode::kAuto) == 2);

// The document's sections in the order ConfigToJson writes them, a nested one after its parent
// (named by its path); "rules" is the array of rule objects, read and written by
// config_json.cc's own code.
constexpr std::string_view kSectionNames[] = {
    "controller", "window", "rules",   "isolation",          "guard",   "panic",
    "slow_start", "picker", "budget", "events",  "subset",   "load_report",        "sources",
    "sources/prometheus",   "sources/prometheus/queries",    "limits",
    "export"};

// Names that go into a header or a Prometheus label: what the two grammars allow.
std::string_view MetricNameProblem(std::string_view v) {
  for (char ch : v) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
    if (!ok) return "may hold only letters, digits, '_', '-' and '.' (it is matched in a header)";
  }
  return "";
}
std::string_view LabelNameProblem(std::string_view v) {
  for (size_t i = 0; i < v.size(); ++i) {
    const char ch = v[i];
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                    (i > 0 && ch >= '0' && ch <= '9');
    if (!ok) return "is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)";
  }
  return "";
}
std::string_view UrlProblem(std::string_view v) {
  if (v.empty() || v.starts_with("http://") || v.starts_with("https://")) {
    for (char ch : v) {
      if (static_cast<unsigned char>(ch) <= ' ' || ch == 0x7f) {
        return "must not hold spaces or control characters";
      }
    }
    return "";
  }
  return "must start with http:// or https:// (or be \"\" to turn the source off)";
}
std::string_view QueryProblem(std::string_view v) {
  for (char ch : v) {
    if (static_cast<unsigned char>(ch) < ' ' && ch != '\t' && ch != '\n') {
      return "must not hold control characters";
    }
  }
  return "";
}
// Paths and names that reach file names and messages.
std::string_view ControlProblem(std::string_view v) {
  for (size_t i = 0; i < v.size(); ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c < 0x20 || c == 0x7f) return "must not contain control characters";
  }
  return "";
}

// Service names joined by commas: each 1..256 bytes, no spaces around them.
std::string_view ServiceListProblem(std::string_view v) {
  if (std::string_view bad = ControlProblem(v); !bad.empty()) return bad;
  if (v.empty()) return "";
  size_t start = 0;
  while (true) {
    const size_t comma = v.find(',', start);
    const std::string_view name = v.substr(start, comma == std::string_view::npos
                                                      ? std::string_view::npos : comma - start);
    if (name.empty()) return "holds an empty service name (two commas, or one at an end)";
    if (name.front() == ' ' || name.back() == ' ')
      return "holds a service name with a space at an end (names are separated by ',' alone)";
    if (comma == std::string_view::npos) return "";
    start = comma + 1;
  }
}
// Every integer key has a closed range: ReadInt takes its two ends.
constexpr Range Ints(int64_t lo, int64_t hi) {
  return {static_cast<double>(lo), static_cast<double>(hi)};
}

constexpr Key Make(std::string_view section, std::string_view name, KeyType type, Range range,
                   std::span<const std::string_view> choices, Field field, std::string_view doc) {
  return {section, name, type, range, choices, field, doc};
}

template <auto... kPath>
constexpr Key Int(std::string_view section, std::string_view name, int64_t lo, int64_t hi,
                  std::string_view doc) {
  return Make(section, name, KeyType::kInt, Ints(lo, hi), {}, FieldAt<kPath...>(), doc);
}
template <auto... kPath>
constexpr Key Number(std::string_view section, std::string_view name, Range range,
                     std::string_view doc) {
  return Make(section, name, KeyType::kDouble, range, {}, FieldAt<kPath...>(), doc);
}
template <auto... kPath>
constexpr Key Bool(std::string_view section, std::string_view name, std::string_view doc) {
  return Make(section, name, KeyType::kBool, {}, {}, FieldAt<kPath...>(), doc);
}
// A string of lo..hi bytes; `check` refuses what the length alone does not.
template <auto... kPath>
constexpr Key Str(std::string_view section, std::string_view name, int64_t lo, int64_t hi,
                  std::string_view (*check)(std::string_view), std::string_view doc) {
  Key k = Make(section, name, KeyType::kString, Ints(lo, hi), {}, FieldAt<kPath...>(), doc);
  k.check = check;
  return k;
}
// Text of at most max_bytes without control characters (a path or a name).
template <auto... kPath>
constexpr Key Text(std::string_view section, std::string_view name, int64_t max_bytes,
                   std::string_view doc) {
  return Str<kPath...>(section, name, 0, max_bytes, ControlProblem, doc);
}
template <auto... kPath>
constexpr Key Enum(std::string_view section, std::string_view name,
                   std::span<const std::string_view> choices, std::string_view doc) {
  return Make(section, name, KeyType::kEnum, {}, choices, FieldAt<kPath...>(), doc);
}

using C = Config;
constexpr auto kController = &C::controller;
constexpr auto kWindow = &C::window;
constexpr auto kIsolation = &C::isolation;
constexpr auto kGuard = &C::guard;
constexpr auto kPanic = &C::panic;
constexpr auto kSlowStart = &C::slow_start;
constexpr auto kPicker = &C::picker;
constexpr auto kBudget = &C::budget;
constexpr auto kEvents = &C::events;
constexpr auto kLimits = &C::limits;
constexpr auto kExport = &C::exports;
constexpr auto kLoadReport = &C::load_report;
constexpr auto kSubset = &C::subset;
constexpr auto kSources = &C::sources;
constexpr auto kProm = &C::Sources::prometheus;
constexpr auto kQueries = &C::Sources::Prometheus::queries;
using Prom = C::Sources::Prometheus;
constexpr int64_t kMaxQueryBytes = 4096;

constexpr Key kKeys[] = {
    // [0, 2^64): every uint64_t, as ReadUint64 reads it.
    Make("", "seed", KeyType::kUint64, {0, 0x1p64, false, true}, {}, FieldAt<&C::seed>(),
         "seed of the picker's random numbers; 0 draws one per engine"),

    Int<kController, &C::Controller::interval_ms>("controller", "interval_ms", 10, kDayMs,
        "health-check cycle: targets are recomputed and weights moved once per interval"),
    Number<kController, &C::Controller::max_step>("controller", "max_step", kPositiveFraction,
        "largest change of a stepped weight per cycle, as a fraction of base weight"),
    Int<kController, &C::Controller::cooldown_ms>("controller", "cooldown_ms", 0, kDayMs,
        "hold after a change before the next stepped change"),
    Enum<kController, &C::Controller::step_limit>("controller", "step_limit", kStepLimitNames,
        "which changes max_step and cooldown_ms limit: increases only, or every change"),
    Int<kController, &C::Controller::burst_ms>("controller", "burst_ms", 0, kDayMs,
        "a cut made to a healthy endpoint is undone at once when a cycle's own results fire "
        "no rule within this long; 0: off"),

    Int<kWindow, &C::Window::length_ms>("window", "length_ms", 10, kDayMs,
        "length of the sliding window behind every statistic"),
    Int<kWindow, &C::Window::min_requests>("window", "min_requests", 1, kMaxCount,
        "fewer results than this in the window make an endpoint unknown, not low"),
    Int<kWindow, &C::Window::evidence_half_life_ms>("window", "evidence_half_life_ms", 0, kDayMs,
        "an endpoint with too few results is judged on its last full window, halved every "
        "this long; 0: unknown at once"),

    Number<kIsolation, &C::Isolation::probe_share>("isolation", "probe_share", kFraction,
        "a half-isolated endpoint's pick weight, as a fraction of its base weight"),
    Number<kIsolation, &C::Isolation::probe_min_per_s>("isolation", "probe_min_per_s", {0, 1000},
        "at least this many probes per second per isolated endpoint"),
    Int<kIsolation, &C::Isolation::exit_min_probes>("isolation", "exit_min_probes", 1, kMaxCount,
        "healthy probe results needed in the window to leave isolation"),
    Int<kIsolation, &C::Isolation::max_ms>("isolation", "max_ms", 1, kDayMs,
        "maximum isolation time, after which the endpoint is forced back with an alert"),
    Number<kIsolation, &C::Isolation::restore_fraction>("isolation", "restore_fraction",
        kPositiveFraction, "weight, as a fraction of base, forced back after max_ms"),
    Number<kIsolation, &C::Isolation::max_share>("isolation", "max_share", kPositiveFraction,
        "most of the service's base weight isolated at once; one endpoint always may be"),

    Bool<kGuard, &C::Guard::enabled>("guard", "enabled",
        "whether cuts and isolations move only the traffic the other endpoints can absorb"),
    Number<kGuard, &C::Guard::max_utilization>("guard", "max_utilization", kPositiveFraction,
        "utilisation up to which an endpoint is counted as having room for moved traffic"),

    Bool<kPanic, &C::Panic::enabled>("panic", "enabled",
        "whether the fallback to round-robin exists"),
    Number<kPanic, &C::Panic::threshold>("panic", "threshold", kFraction,
        "every weight below this fraction of base makes picks plain round-robin"),

    Int<kSlowStart, &C::SlowStart::window_ms>("slow_start", "window_ms", 0, kDayMs,
        "ramp duration for endpoints that join later; 0 disables slow start"),
    Number<kSlowStart, &C::SlowStart::min_fraction>("slow_start", "min_fraction",
        kPositiveFraction, "weight fraction a new endpoint starts at"),
    Number<kSlowStart, &C::SlowStart::aggression>("slow_start", "aggression",
        {0, kNoUpperBound, true}, "ramp shape: weight x max(min, (t / window)^(1 / aggression))"),

    Enum<kPicker, &C::Picker::mode>("picker", "mode", kPickModeNames,
        "exact weighted picks, or two candidates by weight with the cheaper one winning"),
    Int<kPicker, &C::Picker::latency_decay_ms>("picker", "latency_decay_ms", 1, kDayMs,
        "decay time of the latency EWMA in load_aware mode"),
    Number<kPicker, &C::Picker::error_cost>("picker", "error_cost", {0, 1e6},
        "load_aware cost multiplier per unit of failure share: cost x (1 + error_cost x f)"),
    Number<kPicker, &C::Picker::keepalive_share>("picker", "keepalive_share", kFraction,
        "load_aware share of picks made by weight alone, so avoided endpoints stay observed"),

    // Below 1: a budget of 100% of requests failing is no budget.
    Number<kBudget, &C::Budget::max_error_rate>("budget", "max_error_rate", {0, 1, false, true},
        "share of requests allowed to fail over window_ms; the picker's error_cost follows it; "
        "0: off"),
    Int<kBudget, &C::Budget::window_ms>("budget", "window_ms", 10, kDayMs,
        "window of the observed error rate the budget is held to, in whole controller cycles"),
    Number<kBudget, &C::Budget::target_fraction>("budget", "target_fraction", kPositiveFraction,
        "the controller aims at most at this fraction of max_error_rate (a short window is noisy)"),
    Number<kBudget, &C::Budget::min_error_cost>("budget", "min_error_cost", {0, 1e6, true},
        "lowest error_cost the budget controller sets"),
    Number<kBudget, &C::Budget::max_error_cost>("budget", "max_error_cost", {0, 1e6, true},
        "highest error_cost the budget controller sets: errors are minimised there"),

    Int<kEvents, &C::Events::queue_capacity>("events", "queue_capacity", 1, kMaxCount,
        "events kept for polling; when full the oldest are dropped and counted"),

    Enum<kSubset, &C::Subset::mode>("subset", "mode", kSubsetModeNames,
        "which endpoints of a service this client uses: all, a fixed number, or sized by traffic"),
    Str<kSubset, &C::Subset::client_id>("subset", "client_id", 0, 256, ControlProblem,
        "this client's identity, which chooses its subset; required unless mode is off"),
    Int<kSubset, &C::Subset::size>("subset", "size", 1, kMaxCount,
        "fixed mode: endpoints per client (every endpoint when the service has fewer)"),
    Int<kSubset, &C::Subset::auto_min_requests>("subset", "auto_min_requests", 1, kMaxCount,
        "auto mode: results per endpoint per window the size aims at"),
    Int<kSubset, &C::Subset::min_size>("subset", "min_size", 1, kMaxCount,
        "auto mode: fewest endpoints per client"),
    Str<kSubset, &C::Subset::services>("subset", "services", 0, 65536, ServiceListProblem,
        "comma-separated services the subset applies to; \"\" = every service"),
    Int<kSubset, &C::Subset::client_count>("subset", "client_count", 0, kMaxCount,
        "clients in the fleet, when known (0: unknown); with it the subset is an even aperture"),
    Int<kSubset, &C::Subset::client_index>("subset", "client_index", 0, kMaxCount,
        "this client's place in the fleet, 0..client_count-1 (with client_count)"),

    Enum<kLoadReport, &C::LoadReport::prefer>("load_report", "prefer", kResourceSourceNames,
        "which report of a resource the rules read when the server and the client both have one"),
    Int<kLoadReport, &C::LoadReport::max_age_ms>("load_report", "max_age_ms", 1, kDayMs,
        "a server-reported resource older than this is not used"),
    Str<kLoadReport, &C::LoadReport::thread_pool_metric>("load_report", "thread_pool_metric", 1,
        128, MetricNameProblem,
        "the named_metrics or utilization entry of a load report that is the thread pool"),
    Str<kLoadReport, &C::LoadReport::connection_pool_metric>("load_report",
        "connection_pool_metric", 1, 128, MetricNameProblem,
        "the named_metrics or utilization entry of a load report that is the connection pool"),
    Str<kLoadReport, &C::LoadReport::latency_metric>("load_report", "latency_metric", 1, 128,
        MetricNameProblem,
        "the named_metrics entry of a load report that is the server's recent service time, ms"),

    Str<kSources, kProm, &Prom::url>("sources/prometheus", "url", 0, 2048, UrlProblem,
        "the Prometheus server's base URL; \"\" turns the source off"),
    Int<kSources, kProm, &Prom::interval_ms>("sources/prometheus", "interval_ms", 100, kDayMs,
        "time between two polls"),
    Int<kSources, kProm, &Prom::timeout_ms>("sources/prometheus", "timeout_ms", 10, kDayMs,
        "longest one query may take; at most interval_ms"),
    Int<kSources, kProm, &Prom::stale_ms>("sources/prometheus", "stale_ms", 100, kDayMs,
        "no successful poll for this long makes the source stale (an event)"),
    Str<kSources, kProm, &Prom::label>("sources/prometheus", "label", 1, 128, LabelNameProblem,
        "the series label whose value is the endpoint id"),
    Str<kSources, kProm, kQueries, &Prom::Queries::cpu>("sources/prometheus/queries", "cpu", 0,
        kMaxQueryBytes, QueryProblem, "PromQL for CPU use, a fraction per endpoint"),
    Str<kSources, kProm, kQueries, &Prom::Queries::memory>("sources/prometheus/queries",
        "memory", 0, kMaxQueryBytes, QueryProblem,
        "PromQL for memory use, a fraction per endpoint"),
    Str<kSources, kProm, kQueries, &Prom::Queries::thread_pool>("sources/prometheus/queries",
        "thread_pool", 0, kMaxQueryBytes, QueryProblem,
        "PromQL for thread-pool use (busy / max) per endpoint"),
    Str<kSources, kProm, kQueries, &Prom::Queries::connection_pool>(
        "sources/prometheus/queries", "connection_pool", 0, kMaxQueryBytes, QueryProblem,
        "PromQL for connection-pool use (in use / max) per endpoint"),
    Str<kSources, kProm, kQueries, &Prom::Queries::error_rate>(
        "sources/prometheus/queries", "error_rate", 0, kMaxQueryBytes, QueryProblem,
        "PromQL for the server's error rate (errors / requests, all clients) per endpoint"),
    Str<kSources, kProm, kQueries, &Prom::Queries::latency_ms>(
        "sources/prometheus/queries", "latency_ms", 0, kMaxQueryBytes, QueryProblem,
        "PromQL for the server's recent mean service time in ms per endpoint"),

    Int<kLimits, &C::Limits::max_config_bytes>("limits", "max_config_bytes", kMinConfigBytes,
        kBuiltInConfigBytes, "largest config document; can only be lowered"),
    Int<kLimits, &C::Limits::max_services>("limits", "max_services", 1, kMaxCount,
        "most services one engine holds"),
    Int<kLimits, &C::Limits::max_endpoints_per_service>("limits", "max_endpoints_per_service", 1,
        kMaxCount, "most endpoints in one service's endpoint set"),
    Number<kLimits, &C::Limits::max_latency_ms>("limits", "max_latency_ms", {0, kDayMs, true},
        "reported latencies above this are rejected as absurd"),

    Text<kExport, &C::Export::state_file>("export", "state_file", 4095,
        "path of the state file other processes attach to; \"{service}\" and \"{pid}\" are "
        "filled in; empty: none"),
    Text<kExport, &C::Export::state_file_mode>("export", "state_file_mode", 4,
        "the state file's permission bits, octal (\"0600\": the owner only)"),
    Text<kExport, &C::Export::service_name>("export", "service_name", 256,
        "what \"{service}\" becomes in state_file, and the name readers show; empty: the "
        "program's name"),
    Int<kExport, &C::Export::state_history>("export", "state_history", 10, 100000,
        "controller cycles of history the state file keeps, one point each"),
    Int<kExport, &C::Export::state_events>("export", "state_events", 16, kMaxCount,
        "events the state file keeps for readers that attach later"),
};

constexpr Key InRule(std::string_view name, KeyType type, Range range, std::string_view doc,
                   std::span<const std::string_view> choices = {}) {
  return Make(kRulesKey, name, type, range, choices, {}, doc);
}

constexpr Key kRuleKeys[] = {
    InRule("metric", KeyType::kEnum, {}, "the window statistic the rule reads", kMetricNames),
    InRule("threshold", KeyType::kDouble, kFraction,
         "rate and resource metrics: fires when the value, a fraction, is above this"),
    InRule("threshold_ms", KeyType::kDouble, {0, kDayMs, true, false},
         "latency metrics: fires when the value in ms is above this"),
    // Below 1 the rule would fire on most healthy endpoints: the reference is their median.
    InRule("relative", KeyType::kDouble, {1, 1000},
         "latency metrics: fires when the value is above relative x the lower-median endpoint's"),
    InRule("margin", KeyType::kDouble, kFraction,
         "resource metrics: fires only when the value is also above the lower-median "
         "endpoint's plus this margin"),
    InRule("penalty", KeyType::kDouble, kPositiveFraction,
         "added to the endpoint's penalty when the rule fires"),
    InRule("full_rate", KeyType::kDouble, kPositiveFraction,
         "rate metrics: the penalty grows linearly from penalty above the threshold to "
         "full_penalty at this rate"),
    InRule("full_penalty", KeyType::kDouble, kPositiveFraction,
         "rate metrics with full_rate: the penalty at full_rate and above"),
};

Layout BuildLayout() {
  Layout layout;
  auto& objects = layout.objects;
  objects.reserve(1 + std::size(kSectionNames));
  Section& top = objects.emplace_back(Section{"", "", {kSchemaKey, kProfileKey}, {}, "", 0});
  for (const Key& k : kKeys) {
    if (!k.section.empty()) continue;
    top.names.push_back(k.name);
    top.keys.push_back(&k);
  }
  for (std::string_view name : kSectionNames) {
    const size_t slash = name.rfind('/');
    size_t parent = 0;
    std::string_view leaf = name;
    if (slash != std::string_view::npos) {
      leaf = name.substr(slash + 1);
      for (size_t i = 1; i < objects.size(); ++i) {
        if (objects[i].name == name.substr(0, slash)) parent = i;
      }
      if (parent == 0) throw std::logic_error("section " + std::string(name) + " before its parent");
    }
    objects[parent].names.push_back(leaf);
    Section& s = objects.emplace_back(Section{name, "/" + std::string(name), {}, {}, leaf, parent});
    if (name == kRulesKey) {
      s.path += "/N";
      for (const Key& k : kRuleKeys) s.names.push_back(k.name);
      continue;
    }
    for (const Key& k : kKeys) {
      if (k.section != name) continue;
      s.names.push_back(k.name);
      s.keys.push_back(&k);
    }
  }
  // Only now that no vector grows any more do the views into them stay valid.
  for (const Section& s : objects) layout.key_map.emplace_back(s.path, s.names);
  return layout;
}

}  // namespace

std::string Key::Path() const {
  std::string path;
  if (!section.empty()) path += "/" + std::string(section);
  return path + "/" + std::string(name);
}

std::span<const Key> ConfigKeys() { return kKeys; }

std::span<const Key> RuleKeys() { return kRuleKeys; }

const Key& RuleKey(std::string_view name) {
  for (const Key& k : kRuleKeys) {
    if (k.name == name) return k;
  }
  throw std::logic_error("no rule key \"" + std::string(name) + "\"");
}

const Layout& DocumentLayout() {
  // Moving the vectors out of BuildLayout keeps their buffers, so key_map's views stay valid.
  static const Layout layout = BuildLayout();
  return layout;
}

}  // namespace weighted::config_keys
