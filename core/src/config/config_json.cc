// The config document: reading and writing it from the key table (keys.cc), the rule objects,
// and the checks that need more than one key. The generic reading (positions, paths, types) is
// in config_reader.cc.
#include <initializer_list>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "config/config.h"
#include "config/config_reader.h"
#include "util/quoted.h"
#include "config/keys.h"

namespace weighted {

namespace {

using namespace config_reader;
using config_keys::Key;
using config_keys::KeyType;
using config_keys::Value;

constexpr size_t kMaxRules = 64;

constexpr std::string_view kProfiles[] = {"default", "article"};  // index 1: the article's

Rule ReadRule(const Node& n, Keys rule_keys) {
  n.ExpectObject(rule_keys);
  const Key& metric = config_keys::RuleKey("metric");
  Rule r;
  r.metric = static_cast<Metric>(
      ReadChoice(n.Required("metric", "the window statistic the rule reads"), metric.choices));
  r.penalty = ReadDouble(n.Required("penalty", "added when the rule fires, in (0, 1]"),
                         config_keys::RuleKey("penalty").range);
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
    if (absolute) r.threshold = ReadDouble(*absolute, config_keys::RuleKey("threshold_ms").range);
    if (relative) r.relative = ReadDouble(*relative, config_keys::RuleKey("relative").range);
  } else {
    for (std::string_view latency_only : {"threshold_ms", "relative"}) {
      if (auto t = n.Get(latency_only)) {
        t->Fail(fmt::format("only latency metrics take \"{}\"; {} takes \"threshold\", a "
                            "fraction in [0, 1]",
                            latency_only, name));
      }
    }
    r.threshold = ReadDouble(n.Required("threshold", "a fraction in [0, 1]"),
                             config_keys::RuleKey("threshold").range);
  }
  if (auto m = n.Get("margin")) {
    if (!IsResourceMetric(r.metric)) {
      m->Fail(fmt::format("only resource metrics (cpu, memory, thread_pool, connection_pool) "
                          "take \"margin\"; {} is a {}",
                          name, IsLatencyMetric(r.metric)
                                    ? "latency metric, compared with its peers by \"relative\""
                                    : "rate, judged by its threshold"));
    }
    r.margin = ReadDouble(*m, config_keys::RuleKey("margin").range);
  }
  const auto full_rate = n.Get("full_rate");
  const auto full_penalty = n.Get("full_penalty");
  if (full_rate && !IsRateMetric(r.metric)) {
    full_rate->Fail(fmt::format("only rate metrics (error_rate, http_5xx_rate, timeout_rate, "
                                "connect_error_rate, business_error_rate) are graded by "
                                "\"full_rate\"; {} is not a rate",
                                name));
  }
  if (full_penalty && !full_rate) {
    full_penalty->Fail("\"full_penalty\" needs \"full_rate\", the rate at which it is reached");
  }
  if (full_rate) {
    r.full_rate = ReadDouble(*full_rate, config_keys::RuleKey("full_rate").range);
    if (r.full_rate <= r.threshold) {
      full_rate->Fail(fmt::format("must be above the rule's threshold {:g}, got {:g}", r.threshold,
                                  r.full_rate));
    }
    if (full_penalty) {
      r.full_penalty = ReadDouble(*full_penalty, config_keys::RuleKey("full_penalty").range);
    }
    if (r.full_penalty < r.penalty) {
      (full_penalty ? *full_penalty : *full_rate)
          .Fail(fmt::format("full_penalty {:g} is below the rule's penalty {:g}: a higher rate "
                            "would weigh less",
                            r.full_penalty, r.penalty));
    }
  }
  return r;
}

std::vector<Rule> ReadRules(const Node& n, Keys rule_keys) {
  if (!n.v().is_array()) n.Fail(fmt::format("must be an array of rules, got {}", Show(n.v())));
  if (n.v().size() > kMaxRules) {
    n.Fail(fmt::format("at most {} rules are allowed, got {}", kMaxRules, n.v().size()));
  }
  std::vector<Rule> rules;
  for (size_t i = 0; i < n.v().size(); ++i) rules.push_back(ReadRule(n.At(i), rule_keys));
  return rules;
}

void ReadKey(const Node& n, const Key& k, Config& c) {
  Value v;
  switch (k.type) {
    case KeyType::kInt:
      v = ReadInt(n, static_cast<int64_t>(k.range.lo), static_cast<int64_t>(k.range.hi));
      break;
    case KeyType::kUint64:
      v = ReadUint64(n);
      break;
    case KeyType::kDouble:
      v = ReadDouble(n, k.range);
      break;
    case KeyType::kBool:
      v = ReadBool(n);
      break;
    case KeyType::kEnum:
      v = static_cast<int64_t>(ReadChoice(n, k.choices));
      break;
    case KeyType::kString: {
      std::string text = ReadString(n, static_cast<size_t>(k.range.lo),
                                    static_cast<size_t>(k.range.hi));
      if (k.check) {
        if (const std::string_view why = k.check(text); !why.empty()) n.Fail(std::string(why));
      }
      v = std::move(text);
      break;
    }
  }
  k.field.set(c, std::move(v));
}

// Objects and keys in document order, so that of two errors the same one is reported first.
void ReadSections(const Node& root, Config& c) {
  const config_keys::Layout& layout = config_keys::DocumentLayout();
  for (const Key* k : layout.top().keys) {
    if (auto n = root.Get(k->name)) ReadKey(*n, *k, c);
  }
  // Each object's node, by its index in the layout: a nested section is read from its parent's.
  std::vector<std::optional<Node>> nodes(layout.objects.size());
  nodes[0] = root;
  for (size_t i = 1; i < layout.objects.size(); ++i) {
    const config_keys::Section& section = layout.objects[i];
    const std::optional<Node>& parent = nodes[section.parent];
    if (!parent) continue;
    const auto s = parent->Get(section.leaf);
    if (!s) continue;
    nodes[i] = s;
    if (section.name == config_keys::kRulesKey) {
      c.rules = ReadRules(*s, section.names);
      continue;
    }
    s->ExpectObject(section.names);
    for (const Key* k : section.keys) {
      if (auto n = s->Get(k->name)) ReadKey(*n, *k, c);
    }
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
  const Config::Budget& b = c.budget;
  if (b.min_error_cost > b.max_error_cost) {
    Contradiction(doc, {"/budget/min_error_cost", "/budget/max_error_cost"},
                  fmt::format("budget.min_error_cost ({}) is above budget.max_error_cost ({}): "
                              "the controller's price would have no value to take",
                              b.min_error_cost, b.max_error_cost));
  }
  if (b.max_error_rate > 0 && c.picker.mode != PickMode::kLoadAware) {
    Contradiction(doc, {"/budget/max_error_rate", "/picker/mode"},
                  fmt::format("budget.max_error_rate ({}) is set but picker.mode is \"weighted\": "
                              "the budget acts through the load_aware picker's error_cost, which "
                              "weighted picks do not read",
                              b.max_error_rate));
  }
  if (b.window_ms > kMaxWindowSlots * c.controller.interval_ms) {
    Contradiction(doc, {"/budget/window_ms", "/controller/interval_ms"},
                  fmt::format("budget.window_ms ({}) spans more than {} controller cycles of "
                              "controller.interval_ms ({}); the budget keeps one count per cycle "
                              "of its window, so lengthen the interval or shorten the window",
                              b.window_ms, kMaxWindowSlots, c.controller.interval_ms));
  }
  if (c.subset.mode != SubsetMode::kOff && c.subset.client_id.empty() &&
      c.subset.client_count == 0) {
    Contradiction(doc, {"/subset/client_id", "/subset/mode"},
                  "subset.mode is not \"off\" but subset.client_id is empty: the subset is "
                  "chosen by the client's id, and clients without one would all use the same "
                  "endpoints (set it to the instance id, or set subset.client_count and "
                  "subset.client_index)");
  }
  if (c.subset.client_count > 0 && c.subset.client_index >= c.subset.client_count) {
    Contradiction(doc, {"/subset/client_index", "/subset/client_count"},
                  fmt::format("subset.client_index ({}) is not below subset.client_count ({}): "
                              "the clients of a fleet of {} are numbered 0 to {}",
                              c.subset.client_index, c.subset.client_count,
                              c.subset.client_count, c.subset.client_count - 1));
  }
  if (c.subset.client_count == 0 && c.subset.client_index > 0) {
    Contradiction(doc, {"/subset/client_index", "/subset/client_count"},
                  fmt::format("subset.client_index is {} but subset.client_count is 0 (unknown): "
                              "a place in the fleet means something only with the fleet's size",
                              c.subset.client_index));
  }
  const Config::Sources::Prometheus& prom = c.sources.prometheus;
  if (prom.timeout_ms > prom.interval_ms) {
    Contradiction(doc, {"/sources/prometheus/timeout_ms", "/sources/prometheus/interval_ms"},
                  fmt::format("sources.prometheus.timeout_ms ({}) is longer than interval_ms ({}): "
                              "one poll's queries could still run when the next is due",
                              prom.timeout_ms, prom.interval_ms));
  }
  if (prom.stale_ms < prom.interval_ms) {
    Contradiction(doc, {"/sources/prometheus/stale_ms", "/sources/prometheus/interval_ms"},
                  fmt::format("sources.prometheus.stale_ms ({}) is shorter than interval_ms ({}): "
                              "the source would be stale between any two polls",
                              prom.stale_ms, prom.interval_ms));
  }
  const auto& q = prom.queries;
  if (!prom.url.empty() && q.cpu.empty() && q.memory.empty() && q.thread_pool.empty() &&
      q.connection_pool.empty() && q.error_rate.empty() && q.latency_ms.empty()) {
    Contradiction(doc, {"/sources/prometheus/queries", "/sources/prometheus/url"},
                  "sources.prometheus.url is set but no query is: give at least one of "
                  "queries.cpu, memory, thread_pool, connection_pool, error_rate, latency_ms");
  }
  const auto& lr = c.load_report;
  for (const auto& [key, pool] : {std::pair{"thread_pool_metric", &lr.thread_pool_metric},
                                  std::pair{"connection_pool_metric", &lr.connection_pool_metric}}) {
    if (lr.latency_metric == *pool) {
      Contradiction(doc, {"/load_report/latency_metric", fmt::format("/load_report/{}", key)},
                    fmt::format("load_report.latency_metric and {} are both {}: one entry "
                                "cannot be a latency in ms and a pool's fraction",
                                key, Quoted(*pool)));
    }
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

// The state file's path is filled in and created by the engine's process: only the two
// placeholders it knows, and a mode the owner can still read and write.
void CheckExport(const Config& c) {
  const std::string& path = c.exports.state_file;
  for (size_t i = path.find('{'); i != std::string::npos; i = path.find('{', i + 1)) {
    const std::string_view rest = std::string_view(path).substr(i);
    if (rest.starts_with("{service}") || rest.starts_with("{pid}")) continue;
    throw ConfigReadError{WT_ERR_CONFIG_INVALID, "/export/state_file",
                          fmt::format("unknown placeholder at offset {}: only {{service}} and "
                                      "{{pid}} are filled in", i)};
  }
  if (!path.empty() && (path.back() == '/' || path.ends_with("/.") || path.ends_with("/.."))) {
    throw ConfigReadError{WT_ERR_CONFIG_INVALID, "/export/state_file",
                          "names a directory; give the file's path (e.g. /run/weighted/{service}.state)"};
  }
  const std::string& mode = c.exports.state_file_mode;
  const bool octal = (mode.size() == 3 || (mode.size() == 4 && mode[0] == '0')) &&
                     mode.find_first_not_of("01234567") == std::string::npos;
  if (!octal) {
    throw ConfigReadError{WT_ERR_CONFIG_INVALID, "/export/state_file_mode",
                          fmt::format("must be octal permission bits such as \"0600\" or "
                                      "\"0640\", got {}", Quoted(mode))};
  }
  if ((std::stoi(mode, nullptr, 8) & 0600) != 0600) {
    throw ConfigReadError{WT_ERR_CONFIG_INVALID, "/export/state_file_mode",
                          fmt::format("{} leaves the owner without read and write; the writer "
                                      "and its own tools need both (0600 at least)", Quoted(mode))};
  }
}

Config ReadConfig(std::string_view text) {
  const json doc = ParseDocument(text);
  const config_keys::Layout& layout = config_keys::DocumentLayout();
  const Node root(doc, "", layout.key_map);
  root.ExpectObject(layout.top().names);
  if (auto n = root.Get(config_keys::kSchemaKey); n && !n->v().is_string()) {
    n->Fail(fmt::format("must be a string, got {}", Show(n->v())));
  }
  bool article = false;
  if (auto n = root.Get(config_keys::kProfileKey)) article = ReadChoice(*n, kProfiles) == 1;
  Config c = article ? ArticleConfig() : DefaultConfig();
  ReadSections(root, c);
  CheckConsistency(doc, c);
  CheckExport(c);
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
    // The path holds the document's own keys: escaped, so a key cannot forge a log line.
    return {e.code, fmt::format("{}: {}", e.path.empty() ? "(document)" : Escaped(e.path),
                                e.message)};
  } catch (const std::bad_alloc&) {
    return {WT_ERR_NO_MEMORY, "out of memory while reading the config"};
  } catch (const std::exception& e) {
    return {WT_ERR_INTERNAL, fmt::format("unexpected error reading the config: {}", e.what())};
  }
}

std::string ConfigToJson(const Config& c) {
  using ojson = nlohmann::ordered_json;  // keeps the documented key order
  const auto write = [&c](const Key& k) -> ojson {
    const Value v = k.field.get(c);
    if (k.type == KeyType::kEnum) return k.choices[std::get<int64_t>(v)];
    return std::visit([](const auto& x) { return ojson(x); }, v);
  };
  ojson j;
  j[config_keys::kProfileKey] = c.profile;
  const config_keys::Layout& layout = config_keys::DocumentLayout();
  for (const Key* k : layout.top().keys) j[k->name] = write(*k);
  for (const config_keys::Section& section : layout.sections()) {
    ojson out = section.name == config_keys::kRulesKey ? ojson::array() : ojson::object();
    for (const Key* k : section.keys) out[k->name] = write(*k);
    if (section.parent != 0) {  // written after its parent, into it
      j[ojson::json_pointer(section.path)] = std::move(out);
      continue;
    }
    if (section.name == config_keys::kRulesKey) {
      for (const Rule& r : c.rules) {
        ojson rule = {{"metric", MetricName(r.metric)}};
        if (IsLatencyMetric(r.metric)) {
          if (r.threshold >= 0) rule["threshold_ms"] = r.threshold;
          if (r.relative > 0) rule["relative"] = r.relative;
        } else {
          rule["threshold"] = r.threshold;
          if (r.margin >= 0) rule["margin"] = r.margin;
        }
        rule["penalty"] = r.penalty;
        if (r.full_rate >= 0) {
          rule["full_rate"] = r.full_rate;
          rule["full_penalty"] = r.full_penalty;
        }
        out.push_back(std::move(rule));
      }
    }
    j[section.name] = std::move(out);
  }
  return j.dump(2);
}

}  // namespace weighted
