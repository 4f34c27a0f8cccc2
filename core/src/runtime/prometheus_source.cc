#include "runtime/prometheus_source.h"

#include <charconv>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/http_get.h"
#include "util/quoted.h"

namespace weighted {

namespace {

constexpr size_t kMaxAnswerBytes = 8u << 20;  // a vector over every endpoint fits many times
constexpr const char* kName = "prometheus";

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool SameSource(const Config::Sources::Prometheus& a, const Config::Sources::Prometheus& b) {
  return a.url == b.url && a.interval_ms == b.interval_ms && a.timeout_ms == b.timeout_ms &&
         a.stale_ms == b.stale_ms && a.label == b.label && a.queries.cpu == b.queries.cpu &&
         a.queries.memory == b.queries.memory && a.queries.thread_pool == b.queries.thread_pool &&
         a.queries.connection_pool == b.queries.connection_pool &&
         a.queries.error_rate == b.queries.error_rate &&
         a.queries.latency_ms == b.queries.latency_ms;
}

// The source's reason JSON for its events.
std::string Reason(const SourceHealth& h, int64_t now) {
  // dump() escapes the error as JSON wants; built by hand, not from an initializer list, which
  // GCC 12 warns about (-Warray-bounds, a false positive inside std::map).
  const int64_t since = h.ever_ok() ? h.last_ok_ns() : h.started_ns();
  return fmt::format(R"({{"source":"{}","error":{},"age_ms":{}}})", kName,
                     nlohmann::json(h.last_error()).dump(), (now - since) / 1000000);
}

}  // namespace

std::optional<wt_event_type> SourceHealth::OnPoll(int64_t now, bool ok, const std::string& error,
                                                  int64_t stale_ns) {
  ++polls_;
  if (ok) {
    last_ok_ns_ = now;
    last_error_.clear();
    if (stale_) {
      stale_ = false;
      return WT_EVENT_SOURCE_FRESH;
    }
    return std::nullopt;
  }
  ++failed_;
  last_error_ = error;
  // Never successful: stale once it has tried for stale_ns since it started.
  const int64_t since = ever_ok() ? last_ok_ns_ : started_ns_;
  if (!stale_ && now - since >= stale_ns) {
    stale_ = true;
    return WT_EVENT_SOURCE_STALE;
  }
  return std::nullopt;
}

std::string ParseVector(std::string_view body, std::string_view label, bool cap,
                        std::vector<std::pair<std::string, double>>* out, std::string* skipped,
                        double max_ms) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "the answer is not a JSON object";
  const auto status = j.find("status");
  if (status == j.end() || !status->is_string()) return "the answer has no \"status\"";
  if (*status != "success") {
    return fmt::format("Prometheus says {}: {}", j.value("errorType", "error"),
                       Escaped(j.value("error", "(no message)")));
  }
  const auto data = j.find("data");
  if (data == j.end() || !data->is_object()) return "the answer has no \"data\" object";
  const std::string type = data->value("resultType", "");
  if (type != "vector") {
    return fmt::format("the query gives a {}, not an instant vector",
                       type.empty() ? "result of no type" : type);
  }
  const auto result = data->find("result");
  if (result == data->end() || !result->is_array()) return "data.result is not an array";
  for (const nlohmann::json& series : *result) {
    if (!series.is_object()) return "a series is not an object";
    const auto metric = series.find("metric");
    const auto value = series.find("value");
    if (metric == series.end() || !metric->is_object() || value == series.end() ||
        !value->is_array() || value->size() != 2 || !(*value)[1].is_string()) {
      return "a series lacks \"metric\" or a [time, \"value\"] pair";
    }
    const auto id = metric->find(std::string(label));
    if (id == metric->end() || !id->is_string()) continue;  // not an endpoint's series
    const std::string& text = (*value)[1].get_ref<const std::string&>();
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const bool number = ec == std::errc() && end == text.data() + text.size() && std::isfinite(v);
    if (number && cap && v > 1) v = 1;
    const double max = max_ms > 0 ? max_ms : 1;
    if (!number || v < 0 || v > max) {
      if (skipped->empty()) {
        *skipped = max_ms > 0 ? fmt::format("{} = {} is not milliseconds in [0, {:g}]",
                                            Quoted(id->get_ref<const std::string&>()),
                                            Quoted(text), max_ms)
                              : fmt::format("{} = {} is not a fraction in [0, 1]",
                                            Quoted(id->get_ref<const std::string&>()),
                                            Quoted(text));
      }
      continue;
    }
    out->emplace_back(id->get<std::string>(), v);
  }
  return "";
}

void PrometheusSource::Configure(const Config::Sources::Prometheus& cfg) {
  if (cfg_ && !cfg.url.empty() && SameSource(*cfg_, cfg)) return;
  Stop();
  if (cfg.url.empty()) return;
  stop_ = false;
  {
    std::lock_guard lock(mu_);
    cfg_ = cfg;
    health_.emplace(SteadyNs());
    series_ = matched_ = 0;
  }
  thread_ = std::thread([this, cfg] { Loop(cfg); });
}

void PrometheusSource::Stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(wait_mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();  // a transfer under way is aborted by its progress callback
  }
  std::lock_guard lock(mu_);
  cfg_.reset();
  health_.reset();
}

std::optional<SourceView> PrometheusSource::View() const {
  std::lock_guard lock(mu_);
  if (!health_ || !cfg_) return std::nullopt;
  SourceView v;
  v.name = kName;
  v.url = cfg_->url;
  const SourceHealth& h = *health_;
  v.state = h.stale() ? "stale" : h.ever_ok() ? "fresh" : "starting";
  if (h.ever_ok()) v.age_ms = (SteadyNs() - h.last_ok_ns()) / 1000000;
  v.last_error = h.last_error();
  v.polls = h.polls();
  v.failed = h.failed();
  v.series = series_;
  v.matched = matched_;
  std::string error;
  v.library = HttpGet::Available(&error) ? HttpGet::Version() : error;
  return v;
}

std::string PrometheusSource::Poll(const Config::Sources::Prometheus& cfg, HttpGet& http) {
  // By RecordFn index: the resources, the error rate (kSourceErrorRate), the latency
  // (kSourceLatency).
  const std::string* queries[kSourceLatency + 1] = {
      &cfg.queries.cpu,        &cfg.queries.memory,     &cfg.queries.thread_pool,
      &cfg.queries.connection_pool, &cfg.queries.error_rate, &cfg.queries.latency_ms};
  std::string first_error;
  uint64_t series = 0, matched = 0;
  std::string base = cfg.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  for (int i = 0; i <= kSourceLatency; ++i) {
    if (queries[i]->empty() || stop_) continue;
    const auto fail = [&](const std::string& why) {
      if (first_error.empty()) {
        first_error = fmt::format("{} query: {}",
                                  i == kSourceErrorRate ? "error_rate"
                                  : i == kSourceLatency ? "latency_ms"
                                                        : ResourceName(i),
                                  why);
      }
    };
    long status = 0;
    std::string body;
    const std::string url = base + "/api/v1/query?query=" + http.Escape(*queries[i]);
    std::string error = http.Get(url, static_cast<long>(cfg.timeout_ms), kMaxAnswerBytes, stop_,
                                 &status, &body);
    if (!error.empty()) {
      fail(fmt::format("{} ({})", error, Escaped(base)));
      continue;
    }
    std::vector<std::pair<std::string, double>> values;
    std::string skipped;
    // Prometheus answers a bad query with 400 and a JSON error: ParseVector reads its message.
    error = ParseVector(body, cfg.label, i == 0, &values, &skipped,
                        i == kSourceLatency ? kMaxSourceLatencyMs : 0);
    if (error.empty() && status != 200) error = fmt::format("HTTP {}", status);
    if (!error.empty()) {
      fail(status == 200 ? error : fmt::format("HTTP {}: {}", status, error));
      continue;
    }
    for (const auto& [id, v] : values) {
      ++series;
      matched += record_(id, i, v) > 0;
    }
    if (!skipped.empty()) fail(skipped);
  }
  std::lock_guard lock(mu_);
  series_ = series;
  matched_ = matched;
  return first_error;
}

void PrometheusSource::Loop(Config::Sources::Prometheus cfg) {
  HttpGet http;
  const auto interval = std::chrono::milliseconds(cfg.interval_ms);
  while (!stop_) {
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    if (!HttpGet::Available(&error)) {
      // No libcurl: the source stays stale with the reason, and polls nothing.
    } else {
      error = Poll(cfg, http);
    }
    if (stop_) break;
    std::vector<PendingEvent> events;
    {
      std::lock_guard lock(mu_);
      const int64_t now = SteadyNs();
      if (auto ev = health_->OnPoll(now, error.empty(), error, cfg.stale_ms * 1000000)) {
        events.push_back({*ev, 0, "", 0, 0, Reason(*health_, now)});
      }
    }
    if (!events.empty()) raise_(std::move(events));
    std::unique_lock lock(wait_mu_);
    wake_.wait_until(lock, start + interval, [this] { return stop_.load(); });
  }
}

}  // namespace weighted
