#include "weighted_sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <queue>

#include "weighted_sim/backend.h"
#include "weighted_sim/policy.h"
#include "weighted_sim/rng.h"

namespace weighted_sim {
namespace {

enum class Ev : uint8_t { kCallerSend, kOpenArrival, kServiceDone, kErrorAnswer, kTimeout,
                          kReport, kSample };

struct Event {
  int64_t t;
  uint64_t seq;
  Ev type;
  uint64_t a;
};

struct Later {
  bool operator()(const Event& x, const Event& y) const {
    return x.t != y.t ? x.t > y.t : x.seq > y.seq;
  }
};

struct Request {
  int64_t sent_ns = 0;
  Pick pick;
  int caller = -1;              // -1: open loop
  int client = 0;               // which client of the fleet sent it
  bool answered = false;        // the client has its answer (or gave up)
  bool server_error = false;    // the backend will answer 5xx after the service time
  Outcome early = Outcome::kHttp5xx;  // outcome of an answer that needs no worker
};

class TruthView final : public Truth {
 public:
  explicit TruthView(const std::vector<Backend>* b) : b_(b) {}
  double ServiceMeanMs(int i, int64_t now) const override { return (*b_)[i].ServiceMeanMs(now); }
  double ErrorRate(int i, int64_t now) const override { return (*b_)[i].ErrorRate(now); }
  int Outstanding(int i) const override { return (*b_)[i].outstanding(); }
  int Workers(int i) const override { return (*b_)[i].spec().workers; }
  int QueueLimit(int i) const override { return (*b_)[i].spec().queue_limit; }

 private:
  const std::vector<Backend>* b_;
};

class Sim {
 public:
  Sim(const Scenario& sc, std::string_view policy, uint64_t seed)
      : sc_(sc), end_ns_(SecondsToNs(sc.duration_s)), load_rng_(seed, 1), truth_(&backends_) {
    for (size_t i = 0; i < sc.backends.size(); ++i)
      backends_.emplace_back(sc.backends[i], static_cast<int>(i), &sc_.faults, seed);
    PolicyEnv env;
    for (const BackendSpec& b : sc.backends) {
      env.ids.push_back(b.id);
      env.weights.push_back(b.weight);
    }
    env.seed = MixSeed(seed, 7);
    env.truth = &truth_;
    env.timeout_ms = sc.load.timeout_ms;
    env.engine_configs = &sc_.engine_configs;
    env.client_config = sc.clients.config;
    env.client_count = sc.clients.count;
    for (int c = 0; c < sc.clients.count; ++c) {
      env.client_index = c;
      // Client 0 keeps the single client's seed, so a fleet of one is the plain run.
      if (c > 0) env.seed = MixSeed(seed, 7 + 1000003 * static_cast<uint64_t>(c));
      env.client_id = "client-" + std::to_string(c);
      policies_.push_back(MakePolicy(policy, env));
    }
    fleet_ = policies_.size() > 1;
    wants_reports_ = policies_.front()->WantsReports();
    for (const FaultSpec& f : sc.faults) {
      if (std::find(faulty_.begin(), faulty_.end(), f.backend) == faulty_.end())
        faulty_.push_back(f.backend);
    }
    out_.policy = std::string(policy);
    const int seconds = static_cast<int>(std::ceil(sc.duration_s));
    out_.series.Resize(seconds, static_cast<int>(backends_.size()));
    bin_latencies_.resize(seconds);
    last_report_.resize(backends_.size());
  }

  RunOutput Run() {
    Start();
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      // One client: its clock follows every event. A fleet's clients each move when they act
      // (AtClient): moving 10,000 engines' clocks on every event would cost more than the rest.
      if (!fleet_) policies_.front()->AdvanceTo(e.t);
      Dispatch(e);
    }
    Finish();
    for (const auto& p : policies_) {
      const std::optional<Policy::Decisions> d = p->Decided();
      if (!d) continue;
      if (!out_.decisions) out_.decisions = Policy::Decisions{};
      out_.decisions->weight_changes += d->weight_changes;
      out_.decisions->isolations += d->isolations;
    }
    out_.share_errors = policies_.front()->ShareErrors();
    return std::move(out_);
  }

 private:
  Policy& AtClient(int client, int64_t now) {
    Policy& p = *policies_[static_cast<size_t>(client)];
    if (fleet_) p.AdvanceTo(now);
    return p;
  }

  void Schedule(int64_t t, Ev type, uint64_t a = 0) {
    if (t < end_ns_ || (t == end_ns_ && (type == Ev::kReport || type == Ev::kSample)))
      events_.push(Event{t, seq_++, type, a});
  }

  void Start() {
    for (Backend& b : backends_) b.Report(0);  // opens the first interval
    Schedule(SecondsToNs(sc_.report_interval_s), Ev::kReport);
    Schedule(kNsPerS, Ev::kSample);
    if (sc_.load.kind == LoadSpec::Kind::kClosed) {
      for (int c = 0; c < sc_.load.callers; ++c)
        Schedule(MsToNs(load_rng_.Exponential(sc_.load.think_mean_ms)), Ev::kCallerSend, c);
    } else {
      NextArrival(0);
    }
  }

  void Dispatch(const Event& e) {
    switch (e.type) {
      case Ev::kCallerSend: Send(e.t, static_cast<int>(e.a)); break;
      case Ev::kOpenArrival: Send(e.t, -1); NextArrival(e.t); break;
      case Ev::kServiceDone: ServiceDone(e.a, e.t); break;
      case Ev::kErrorAnswer: Answer(e.a, e.t, requests_[e.a].early); break;
      case Ev::kTimeout: Answer(e.a, e.t, Outcome::kTimeout); break;
      case Ev::kReport: Report(e.t); break;
      case Ev::kSample: Sample(e.t); break;
    }
  }

  double RateFactor(double t_s) const {
    const auto& p = sc_.load.rate_profile;
    if (p.empty()) return 1.0;
    if (t_s <= p.front().first) return p.front().second;
    for (size_t i = 1; i < p.size(); ++i) {
      if (t_s <= p[i].first) {
        const double x = (t_s - p[i - 1].first) / (p[i].first - p[i - 1].first);
        return p[i - 1].second + x * (p[i].second - p[i - 1].second);
      }
    }
    return p.back().second;
  }

  void NextArrival(int64_t now) {
    const double rate = sc_.load.rate_per_s * RateFactor(static_cast<double>(now) / kNsPerS);
    if (rate <= 0) return Schedule(now + kNsPerS / 10, Ev::kOpenArrival);  // idle: look again
    Schedule(now + std::max<int64_t>(1, SecondsToNs(load_rng_.Exponential(1.0 / rate))),
             Ev::kOpenArrival);
  }

  int Bin(int64_t t) const {
    return std::clamp(static_cast<int>(t / kNsPerS), 0, out_.series.seconds - 1);
  }

  void CountSick(int64_t now, int chosen) {
    bool any = false;
    bool chosen_sick = false;
    for (int i : faulty_) {  // only a backend with a fault can be sick
      if (!backends_[static_cast<size_t>(i)].EffectsAt(now).sick) continue;
      any = true;
      chosen_sick |= i == chosen;
    }
    out_.sent_while_sick += any ? 1 : 0;
    out_.sent_to_sick += chosen_sick ? 1 : 0;
  }

  void Send(int64_t now, int caller) {
    const uint64_t id = requests_.size();
    Request r;
    r.sent_ns = now;
    r.caller = caller;
    if (fleet_) {
      const auto n = static_cast<int>(policies_.size());
      r.client = caller >= 0 ? caller % n : static_cast<int>(load_rng_.Uniform() * n) % n;
    }
    r.pick = AtClient(r.client, now).PickBackend(now);
    const int b = r.pick.backend;
    requests_.push_back(r);
    ++out_.sent;
    out_.probes += (r.pick.flags & 1u) ? 1 : 0;  // WT_PICK_PROBE
    out_.panic_picks += (r.pick.flags & 2u) ? 1 : 0;  // WT_PICK_PANIC
    out_.series.sent[Bin(now)]++;
    out_.series.backends[b].sent[Bin(now)]++;
    CountSick(now, b);

    const Backend::Arrival a = backends_[b].Arrive(id, now);
    switch (a.admit) {
      case Backend::Admit::kStarted: StartService(a.started); break;
      case Backend::Admit::kQueued: break;
      case Backend::Admit::kRefused:
        requests_[id].early = Outcome::kConnectError;
        Schedule(a.answer_ns, Ev::kErrorAnswer, id);
        break;
      case Backend::Admit::kRejected:
      case Backend::Admit::kFastFailed:
        requests_[id].early = Outcome::kHttp5xx;
        Schedule(a.answer_ns, Ev::kErrorAnswer, id);
        break;
    }
    Schedule(now + MsToNs(sc_.load.timeout_ms), Ev::kTimeout, id);
  }

  void StartService(const Backend::Started& s) {
    requests_[s.request].server_error = s.error;
    Schedule(s.done_ns, Ev::kServiceDone, s.request);
  }

  void ServiceDone(uint64_t id, int64_t now) {
    const int b = requests_[id].pick.backend;
    if (auto next = backends_[b].Finish(now)) StartService(*next);
    Answer(id, now, requests_[id].server_error ? Outcome::kHttp5xx : Outcome::kSuccess);
  }

  void Answer(uint64_t id, int64_t now, Outcome outcome) {
    Request& r = requests_[id];
    if (r.answered) return;  // the client already timed out; the late answer is dropped
    r.answered = true;
    const int b = r.pick.backend;
    Completion c;
    c.backend = b;
    c.pick = r.pick;
    c.outcome = outcome;
    c.latency_ms = static_cast<double>(now - r.sent_ns) / kNsPerMs;
    const bool has_trailer = outcome == Outcome::kSuccess || outcome == Outcome::kHttp5xx;
    c.trailer = has_trailer ? &last_report_[b] : nullptr;
    AtClient(r.client, now).OnComplete(c, now);

    const int bin = Bin(now);
    Series& s = out_.series;
    if (outcome == Outcome::kSuccess) {
      s.success[bin]++;
      s.backends[b].success[bin]++;
    } else {
      s.errors[bin]++;
      s.backends[b].errors[bin]++;
      if (outcome == Outcome::kTimeout) s.timeouts[bin]++;
    }
    bin_latencies_[bin].push_back(c.latency_ms);
    out_.latencies_ms.push_back(c.latency_ms);
    if (r.caller >= 0)
      Schedule(now + MsToNs(load_rng_.Exponential(sc_.load.think_mean_ms)), Ev::kCallerSend,
               static_cast<uint64_t>(r.caller));
  }

  void Report(int64_t now) {
    for (size_t i = 0; i < backends_.size(); ++i) {
      last_report_[i] = backends_[i].Report(now);
      if (!fleet_) policies_.front()->OnReport(static_cast<int>(i), last_report_[i], now);
    }
    if (fleet_ && wants_reports_) {
      for (size_t c = 0; c < policies_.size(); ++c) {
        Policy& p = AtClient(static_cast<int>(c), now);
        for (size_t i = 0; i < backends_.size(); ++i) p.OnReport(static_cast<int>(i), last_report_[i], now);
      }
    }
    Schedule(now + SecondsToNs(sc_.report_interval_s), Ev::kReport);
  }

  void Sample(int64_t now) {
    const int bin = Bin(now - 1);
    // A fleet's weights are its first client's: each client has its own.
    const std::vector<double> w = policies_.front()->Weights();
    const std::vector<std::string> states = policies_.front()->States();
    for (size_t i = 0; i < backends_.size(); ++i) {
      BackendSeries& bs = out_.series.backends[i];
      bs.cpu[bin] = last_report_[i].cpu;
      bs.memory[bin] = last_report_[i].memory;
      bs.queue[bin] = backends_[i].queued();
      bs.weight[bin] = i < w.size() ? w[i] : std::nan("");
      bs.sick[bin] = backends_[i].EffectsAt(now - 1).sick ? 1 : 0;
      if (i < states.size()) bs.state[bin] = states[i];
    }
    Schedule(now + kNsPerS, Ev::kSample);
  }

  void Finish() {
    Series& s = out_.series;
    for (int i = 0; i < s.seconds; ++i) {
      std::vector<double>& v = bin_latencies_[i];
      if (v.empty()) continue;
      double sum = 0;
      for (double x : v) sum += x;
      s.mean_latency_ms[i] = sum / static_cast<double>(v.size());
      std::sort(v.begin(), v.end());
      s.p99_latency_ms[i] = v[static_cast<size_t>(std::ceil(0.99 * v.size())) - 1];
    }
    std::sort(out_.latencies_ms.begin(), out_.latencies_ms.end());
  }

  const Scenario& sc_;
  int64_t end_ns_;
  Rng load_rng_;
  std::vector<Backend> backends_;
  TruthView truth_;
  std::vector<std::unique_ptr<Policy>> policies_;  // one per client
  bool fleet_ = false;
  bool wants_reports_ = false;
  std::vector<int> faulty_;  // backends some fault names
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  uint64_t seq_ = 0;
  std::vector<Request> requests_;
  std::vector<BackendReport> last_report_;
  std::vector<std::vector<double>> bin_latencies_;
  RunOutput out_;
};

}  // namespace

RunOutput Simulate(const Scenario& scenario, std::string_view policy, uint64_t seed) {
  Sim sim(scenario, policy, seed);
  return sim.Run();
}

}  // namespace weighted_sim
