// This engine, driven exactly as a user drives it through the C API (weighted/weighted.h):
// a manual-clock engine, one service whose endpoints are the scenario's backends with their
// discovery weights, pick -> complete with the client-observed latency and outcome, and the
// backends' CPU and memory reported every report interval. The engine's clock is advanced to
// each event's time before anything else happens at that time.
//
// A variant's config may carry a simulator-only section, taken out before the engine sees it:
//   "sim": {"resources": "scrape"}  the backends' reports every interval through
//                                   wt_service_report_resources (the default: a metrics scrape)
//   "sim": {"resources": "header"}  the backend's latest report on every response, as the
//                                   endpoint-load-metrics header a server module sends, through
//                                   wt_service_complete_with_load (none on timeouts and
//                                   connection errors: no response, no header)
//   "sim": {"resources": "none"}    client-side signals only (latency and outcomes)
//   "sim": {"resources": "poll"}    every backend's CPU and memory (means over the last
//                                   poll_s, default 5) and requests/s and errors/s (over about
//                                   the last rate_s, default 30, as rate(...[30s]) would give),
//                                   every poll_s whatever this client's traffic: a metrics
//                                   system (the Prometheus source with its error_rate query)
//                                   that sees every client's requests, through
//                                   wt_service_report_load_key
//   "sim": {"aperture": true}       subset.client_count and client_index from the fleet (the
//                                   deterministic aperture), as a StatefulSet would give them
//   "sim": {"server_latency": true} the header and the poll also carry the backend's mean
//                                   service time (named_metrics.latency_ms; over the poll's
//                                   span for the poll), as the server modules send it
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "factories.h"
#include "weighted/weighted.h"

namespace weighted_sim {
namespace {

void Check(wt_status s, const char* what) {
  if (s != WT_OK)
    throw std::runtime_error(std::string(what) + ": " + wt_status_name(s) + ": " + wt_last_error());
}

int ToEngine(Outcome o) {
  switch (o) {
    case Outcome::kSuccess: return WT_OUTCOME_SUCCESS;
    case Outcome::kHttp5xx: return WT_OUTCOME_HTTP_5XX;
    case Outcome::kTimeout: return WT_OUTCOME_TIMEOUT;
    case Outcome::kConnectError: return WT_OUTCOME_CONNECT_ERROR;
  }
  return WT_OUTCOME_HTTP_5XX;
}

enum class Feed { kScrape, kHeader, kPoll, kNone };

class Engine final : public Policy {
 public:
  Engine(const PolicyEnv& env, const char* config_json)
      : ids_(env.ids), client_index_(env.client_index), client_count_(env.client_count) {
    nlohmann::json config = nlohmann::json::parse(config_json);
    // The fleet's client-side config over the variant's (a fleet can set "sim" too).
    if (!env.client_config.empty()) config.merge_patch(nlohmann::json::parse(env.client_config));
    if (auto it = config.find("sim"); it != config.end()) {
      const std::string feed = it->value("resources", std::string("scrape"));
      if (feed == "header") feed_ = Feed::kHeader;
      else if (feed == "none") feed_ = Feed::kNone;
      else if (feed == "poll") feed_ = Feed::kPoll;
      else if (feed != "scrape")
        throw std::invalid_argument("sim.resources: \"" + feed +
                                    "\" is not scrape, header, poll or none");
      const double poll_s = it->value("poll_s", 5.0);
      if (!(poll_s > 0 && poll_s <= 3600))
        throw std::invalid_argument("sim.poll_s: not in (0, 3600]");
      poll_ns_ = static_cast<int64_t>(poll_s * 1e9);
      const double rate_s = it->value("rate_s", 30.0);
      if (!(rate_s >= 1 && rate_s <= 3600))
        throw std::invalid_argument("sim.rate_s: not in [1, 3600]");
      rate_keep_ = std::exp(-2.0 / rate_s);  // per 1-s report: a time constant of rate_s / 2
      server_latency_ = it->value("server_latency", false);
      if (it->value("aperture", false)) {
        config["subset"]["client_count"] = env.client_count;
        config["subset"]["client_index"] = env.client_index;
      }
      config.erase(it);
    }
    if (auto sub = config.find("subset"); sub != config.end() && sub->is_object() &&
                                         !sub->contains("client_id") && !env.client_id.empty())
      (*sub)["client_id"] = env.client_id;
    config["seed"] = env.seed | 1;  // 0 would mean "random per engine"
    if (auto c = config.find("controller"); c != config.end() && c->contains("interval_ms"))
      interval_ns_ = c->at("interval_ms").get<int64_t>() * 1000000;
    // A fleet's first client alone: reading 10,000 engines' snapshots every cycle would cost
    // more than the run.
    record_shares_ = env.client_id.empty() || env.client_id == "client-0";
    // Events reach the simulator through the callback; the pollable queue would only keep
    // each engine's last 1,024 (endpoint_added x 500 at start, 10,000 engines: ~0.5 GB).
    if (!config.contains("events")) config["events"] = {{"queue_capacity", 1}};
    const std::string text = config.dump();
    Check(wt_engine_create(text.data(), text.size(), WT_CLOCK_MANUAL, &engine_), "wt_engine_create");
    Check(wt_engine_set_event_callback(engine_, &Engine::Count, this, nullptr), "wt_engine_set_event_callback");
    Check(wt_engine_service(engine_, "sim", &service_), "wt_engine_service");
    std::vector<wt_endpoint_spec> specs(ids_.size(), wt_endpoint_spec WT_ENDPOINT_SPEC_INIT);
    for (size_t i = 0; i < ids_.size(); ++i) {
      specs[i].id = ids_[i].c_str();
      specs[i].base_weight = env.weights[i];
    }
    Check(wt_service_set_endpoints(service_, specs.data(), specs.size(), nullptr, nullptr, nullptr),
          "wt_service_set_endpoints");
  }
  ~Engine() override { wt_engine_destroy(engine_); }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void AdvanceTo(int64_t now) override {
    if (now <= now_) return;
    Check(wt_engine_advance(engine_, now - now_), "wt_engine_advance");
    const bool cycled = now / interval_ns_ > now_ / interval_ns_;
    now_ = now;
    if (cycled && record_shares_) ObserveCycle(now / interval_ns_);
  }

  Pick PickBackend(int64_t) override {
    wt_pick p = WT_PICK_INIT;
    Check(wt_service_pick(service_, &p), "wt_service_pick");
    Pick out;
    out.backend = static_cast<int>(p.index);
    out.key = p.key;
    out.epoch = p.epoch;
    out.index = p.index;
    out.flags = p.flags;
    out.ticket = p.ticket;
    return out;
  }

  void OnComplete(const Completion& c, int64_t) override {
    wt_pick p = WT_PICK_INIT;
    p.key = c.pick.key;
    p.epoch = c.pick.epoch;
    p.index = c.pick.index;
    p.flags = c.pick.flags;
    p.ticket = c.pick.ticket;
    if (feed_ == Feed::kHeader && c.trailer != nullptr) {
      // The simulated server's CPU is its workers' busy share (backend.h), so it is the request
      // pool's use too: what a Tomcat behind the Spring filter would send as both.
      const BackendReport& r = *c.trailer;
      char header[256];
      int n = std::snprintf(header, sizeof header,
                            "TEXT cpu_utilization=%.4g, mem_utilization=%.4g, "
                            "named_metrics.thread_pool=%.4g, rps_fractional=%.4g, eps=%.4g",
                            r.cpu, r.memory, r.cpu, r.qps, r.eps);
      // None before the backend timed a request (its first report), as the server modules.
      if (server_latency_ && r.latency_ms > 0) {
        n += std::snprintf(header + n, sizeof header - static_cast<size_t>(n),
                           ", named_metrics.latency_ms=%.4g", r.latency_ms);
      }
      Check(wt_service_complete_with_load(service_, &p, c.latency_ms, ToEngine(c.outcome), header,
                                          static_cast<size_t>(n)),
            "wt_service_complete_with_load");
      return;
    }
    Check(wt_service_complete(service_, &p, c.latency_ms, ToEngine(c.outcome)),
          "wt_service_complete");
  }

  void OnReport(int backend, const BackendReport& r, int64_t now) override {
    if (feed_ == Feed::kPoll) {
      Poll(backend, r, now);
      return;
    }
    if (feed_ != Feed::kScrape) return;
    wt_resources res = WT_RESOURCES_INIT;
    res.present = WT_RES_CPU | WT_RES_MEMORY;
    res.cpu = r.cpu;
    res.memory = r.memory;
    Check(wt_service_report_resources(service_, ids_[backend].c_str(), &res),
          "wt_service_report_resources");
  }

  bool WantsReports() const override { return feed_ == Feed::kScrape || feed_ == Feed::kPoll; }
  std::vector<double> Weights() const override;
  std::vector<std::string> States() const override;
  std::vector<ShareError> ShareErrors() const override { return share_errors_; }
  std::optional<Decisions> Decided() const override { return decided_; }

 private:
  std::vector<std::string> ids_;
  int client_index_ = 0, client_count_ = 1;
  wt_engine* engine_ = nullptr;
  wt_service* service_ = nullptr;
  int64_t now_ = 0;
  Feed feed_ = Feed::kScrape;
  Decisions decided_;
  // The poll feed: each backend's sums since the last poll, and when the next is due.
  struct Sums {
    double cpu = 0, memory = 0;
    int reports = 0;
    double qps = 0, eps = 0;  // exponential means over about rate_s, not reset by a poll
    double latency_ms = 0;    // the reports' latencies, summed as cpu is
    int timed = 0;            // reports that had one
  };
  bool server_latency_ = false;
  double rate_keep_ = 0.9355;
  std::vector<Sums> sums_;
  std::vector<uint64_t> keys_;
  int64_t poll_ns_ = 5'000'000'000;
  int64_t next_poll_ns_ = 0;
  int64_t interval_ns_ = 5000000000;  // controller.interval_ms (the default's 5 s)
  bool record_shares_ = false;
  int64_t last_cycle_ = -2;             // the cycle whose expected shares are kept
  std::vector<double> expected_;        // published as that cycle ended, by backend
  std::vector<ShareError> share_errors_;

  nlohmann::json SimService() const;
  // The snapshot as cycle `cycle` left it: its measured shares against the ones the previous
  // cycle expected (a cycle without results has no share to compare).
  void ObserveCycle(int64_t cycle);

  void Poll(int backend, const BackendReport& r, int64_t now) {
    if (sums_.empty()) {
      sums_.resize(ids_.size());
      keys_.resize(ids_.size());
      for (size_t i = 0; i < ids_.size(); ++i)
        Check(wt_service_endpoint_key(service_, ids_[i].c_str(), &keys_[i]),
              "wt_service_endpoint_key");
      // Each client polls at its own phase, as a fleet whose instances started at different
      // times does; all polling at once would make every client act on the same figure together.
      next_poll_ns_ = now + poll_ns_ * (1 + client_index_) / std::max(1, client_count_);
    }
    Sums& s = sums_[static_cast<size_t>(backend)];
    s.cpu += r.cpu, s.memory += r.memory, ++s.reports;
    if (r.latency_ms > 0) s.latency_ms += r.latency_ms, ++s.timed;
    s.qps = rate_keep_ * s.qps + (1 - rate_keep_) * r.qps;
    s.eps = rate_keep_ * s.eps + (1 - rate_keep_) * r.eps;
    if (now < next_poll_ns_) return;
    // Reports arrive backend by backend at one time: the poll is due once the last has come in.
    if (static_cast<size_t>(backend) + 1 == ids_.size()) next_poll_ns_ = now + poll_ns_;
    const double n = s.reports;
    char header[256];
    int len = std::snprintf(header, sizeof header,
                            "TEXT cpu_utilization=%.4g, mem_utilization=%.4g, "
                            "named_metrics.thread_pool=%.4g, rps_fractional=%.4g, eps=%.4g",
                            s.cpu / n, s.memory / n, s.cpu / n, s.qps, s.eps);
    if (server_latency_ && s.timed > 0) {
      len += std::snprintf(header + len, sizeof header - static_cast<size_t>(len),
                           ", named_metrics.latency_ms=%.4g", s.latency_ms / s.timed);
    }
    Check(wt_service_report_load_key(service_, keys_[static_cast<size_t>(backend)], header,
                                     static_cast<size_t>(len)),
          "wt_service_report_load_key");
    s.cpu = s.memory = s.latency_ms = 0, s.reports = s.timed = 0;
  }

  static void Count(void* user, const wt_event* e) {
    Decisions& d = static_cast<Engine*>(user)->decided_;
    if (e->type == WT_EVENT_WEIGHT_CHANGED) ++d.weight_changes;
    if (e->type == WT_EVENT_ISOLATED) ++d.isolations;
  }
};

// The service's snapshot, as a dashboard would read it (null if the engine has none).
nlohmann::json Engine::SimService() const {
  char* text = nullptr;
  size_t len = 0;
  Check(wt_engine_snapshot_json(engine_, &text, &len), "wt_engine_snapshot_json");
  nlohmann::json snap = nlohmann::json::parse(text, text + len);
  wt_free(text);
  for (auto& s : snap.at("services"))
    if (s.value("name", std::string()) == "sim") return std::move(s);
  return nullptr;
}

void Engine::ObserveCycle(int64_t cycle) {
  const nlohmann::json svc = SimService();
  if (svc.is_null()) return;
  std::vector<double> measured(ids_.size(), 0.0), expected(ids_.size(), 0.0);
  uint64_t results = 0;
  for (const auto& e : svc.at("endpoints")) {
    const uint64_t i = e.at("index").get<uint64_t>();
    if (i >= ids_.size()) continue;
    measured[i] = e.at("share").at("last_cycle").get<double>();
    expected[i] = e.at("share").at("expected").get<double>();
    results += e.at("share").at("results").get<uint64_t>();
  }
  if (last_cycle_ == cycle - 1 && results > 0) {
    for (size_t i = 0; i < ids_.size(); ++i)
      share_errors_.push_back({double(cycle * interval_ns_) / 1e9, static_cast<int>(i),
                               100.0 * std::fabs(expected_[i] - measured[i])});
  }
  last_cycle_ = cycle;
  expected_ = std::move(expected);
}

// The published states: "unknown" where the engine has no evidence to judge on, as the
// dashboard shows it.
std::vector<std::string> Engine::States() const {
  std::vector<std::string> out(ids_.size(), "unknown");
  const nlohmann::json svc = SimService();
  if (svc.is_null()) return out;
  for (const auto& e : svc.at("endpoints")) {
    const std::string id = e.at("id").get<std::string>();
    std::string state = e.value("state", std::string("unknown"));
    const auto j = e.find("judgement");
    if (j != e.end() && j->value("evidence", std::string()) == "none" && state != "isolated") {
      state = "unknown";
    }
    for (size_t i = 0; i < ids_.size(); ++i)
      if (ids_[i] == id) out[i] = state;
  }
  return out;
}

// The published weights, read from the snapshot a dashboard would read, normalised.
std::vector<double> Engine::Weights() const {
  const nlohmann::json svc = SimService();
  if (svc.is_null()) return {};
  std::vector<double> w(ids_.size(), 0.0);
  double sum = 0;
  for (const auto& e : svc.at("endpoints")) {
    const std::string id = e.at("id").get<std::string>();
    for (size_t i = 0; i < ids_.size(); ++i)
      if (ids_[i] == id) w[i] = e.value("effective_weight", e.value("weight", 0.0));
  }
  for (double x : w) sum += x;
  for (double& x : w) x = sum > 0 ? x / sum : 0.0;
  return w;
}

}  // namespace

std::unique_ptr<Policy> MakeEngine(const PolicyEnv& env, const char* config_json) {
  return std::make_unique<Engine>(env, config_json);
}

}  // namespace weighted_sim
