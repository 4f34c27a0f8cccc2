#include "runtime/engine.h"

#include <fmt/format.h>

#include "util/quoted.h"
#include "util/utf8.h"

namespace weighted {

namespace {
constexpr size_t kMaxServiceName = 256;
constexpr int64_t kMaxManualNs = int64_t{1} << 62;
// One advance runs every cycle that falls due, each over every endpoint, and holds their events
// until it returns: a delta of decades would run for hours. Larger steps are refused up front.
constexpr int64_t kMaxCyclesPerAdvance = 1000000;
}

Engine::Engine(Config cfg, int clock_mode)
    : config_(std::make_shared<const Config>(std::move(cfg))),
      reclaimer_(config_->seed),
      events_(config_->events.queue_capacity),
      prometheus_([this](std::string_view id, int r, double v) { return RecordFromSource(id, r, v); },
                  [this](std::vector<PendingEvent> evs) {
                    for (PendingEvent& ev : evs) ev.time_ns = Now();
                    events_.Dispatch("", evs);
                  }) {
  if (clock_mode == WT_CLOCK_MANUAL) {
    auto c = std::make_unique<ManualClock>();
    manual_clock_ = c.get();
    clock_ = std::move(c);
  } else {
    clock_ = std::make_unique<RealClock>();
  }
  next_cycle_ns_ = config_->controller.interval_ms * kNsPerMs;
}

Status Engine::Create(const char* where, std::string_view json, int clock_mode,
                      std::unique_ptr<Engine>* out) {
  if (clock_mode != WT_CLOCK_REAL && clock_mode != WT_CLOCK_MANUAL) {
    return InvalidArgument(fmt::format("{}: clock_mode must be WT_CLOCK_REAL (0) or "
                                       "WT_CLOCK_MANUAL (1), got {}", where, clock_mode));
  }
  Config cfg;
  Status s = ParseConfig(json, &cfg);
  if (!s.ok()) return s;
  std::unique_ptr<Engine> e(new Engine(std::move(cfg), clock_mode));
  if (clock_mode == WT_CLOCK_REAL) e->controller_ = std::thread([p = e.get()] { p->ControllerLoop(); });
  e->prometheus_.Configure(e->config_->sources.prometheus);
  *out = std::move(e);
  return Status::Ok();
}

Engine::~Engine() {
  prometheus_.Stop();  // before anything it records into or raises events through goes
  {
    std::lock_guard lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (controller_.joinable()) controller_.join();
  SetStateSink(nullptr);  // its last write reads the services, so it goes before them
  magic_ = 0;
}

std::shared_ptr<const Config> Engine::config() const {
  std::lock_guard lock(config_mu_);
  return config_;
}

Status Engine::Reload(const char* where, std::string_view json) {
  Config cfg;
  Status s = ParseConfig(json, &cfg);
  if (!s.ok()) return s;
  auto next = std::make_shared<const Config>(std::move(cfg));
  {
    std::unique_lock membership(membership_mu_);
    std::lock_guard lock(services_mu_);
    if (services_.size() > next->limits.max_services) {
      return {WT_ERR_LIMIT, fmt::format("{}: the engine has {} services, more than the new "
                                        "limits.max_services = {}",
                                        where, services_.size(), next->limits.max_services)};
    }
    for (auto& [name, svc] : services_) {
      size_t n = 0;
      svc->Inspect([&](Service& s) { n = s.endpoints().size(); });
      if (n > next->limits.max_endpoints_per_service) {
        return {WT_ERR_LIMIT, fmt::format("{}: service {} has {} endpoints, more than the new "
                                          "limits.max_endpoints_per_service = {}", where,
                                          Quoted(name), n, next->limits.max_endpoints_per_service)};
      }
    }
    std::lock_guard config_lock(config_mu_);
    config_ = next;
  }
  events_.SetCapacity(next->events.queue_capacity);
  prometheus_.Configure(next->sources.prometheus);  // restarts only if its section changed
  EventBatches batches;
  {
    std::lock_guard lock(services_mu_);  // no service is removed under the republish
    for (auto& [name, svc] : services_) {
      std::vector<PendingEvent> evs;
      svc->Republish(*next, &evs);
      if (!evs.empty()) batches.emplace_back(name, std::move(evs));
    }
  }
  std::vector<PendingEvent> ev{{WT_EVENT_CONFIG_RELOADED, Now(), "", 0, 0,
                                fmt::format(R"({{"profile":"{}"}})", next->profile)}};
  Deliver("", ev);
  Dispatch(batches);
  SinkChanged();
  return Status::Ok();
}

Status Engine::GetService(const char* where, const char* name, Service** out) {
  const std::string_view n(name);
  if (n.empty() || n.size() > kMaxServiceName) {
    return InvalidArgument(fmt::format("{}: name must be 1..{} bytes, got {}", where,
                                       kMaxServiceName, n.size()));
  }
  if (!IsUtf8(n)) return InvalidArgument(fmt::format("{}: name is not valid UTF-8", where));
  auto cfg = config();
  std::lock_guard lock(services_mu_);
  auto it = services_.find(n);
  if (it != services_.end()) {
    *out = it->second.get();
    return Status::Ok();
  }
  if (services_.size() >= cfg->limits.max_services) {
    return {WT_ERR_LIMIT, fmt::format("{}: cannot create service {}: limits.max_services = "
                                      "{} reached", where, Quoted(n), cfg->limits.max_services)};
  }
  auto svc = std::make_unique<Service>(std::string(n), *this, reclaimer_, *clock_, *cfg);
  *out = svc.get();
  services_.emplace(std::string(n), std::move(svc));
  return Status::Ok();
}

Status Engine::SetEndpoints(const char* where, Service* svc, const SpecArray& specs,
                            wt_release_fn release, uint64_t* keys, uint64_t* epoch) {
  std::vector<PendingEvent> evs;
  Status s;
  {
    std::shared_lock membership(membership_mu_);
    s = svc->SetEndpoints(where, specs, release, *config(), &evs, keys, epoch);
  }
  Deliver(svc->name(), evs);
  if (s.ok()) SinkChanged();
  return s;
}

Status Engine::RemoveService(const char* where, Service* svc) {
  std::unique_ptr<Service> owned;
  size_t endpoints = 0;
  {
    std::lock_guard cycle(cycle_mu_);
    std::lock_guard lock(services_mu_);
    auto it = services_.find(svc->name());
    if (it == services_.end() || it->second.get() != svc) {
      return NotFound(fmt::format("{}: the service is not in this engine (removed already?)", where));
    }
    owned = std::move(it->second);
    services_.erase(it);
  }
  owned->Inspect([&](Service& s) { endpoints = s.endpoints().size(); });
  std::vector<PendingEvent> ev{{WT_EVENT_SERVICE_REMOVED, Now(), "", 0, 0,
                                fmt::format(R"({{"endpoints":{}}})", endpoints)}};
  const std::string name = owned->name();
  // A hot-path call that began before the removal may still hold the service's snapshot, and
  // its retired endpoints still settle their totals into it: it goes after them.
  Service* raw = owned.release();
  reclaimer_.Retire([raw] { delete raw; });
  reclaimer_.Collect();
  Deliver(name, ev);
  SinkChanged();
  return Status::Ok();
}

size_t Engine::RecordFromSource(std::string_view id, int resource, double value) {
  size_t n = 0;
  if (resource == kSourceErrorRate) {
    ForEachService([&](Service& svc) { n += svc.RecordServerErrorRateById(id, value); });
    return n;
  }
  if (resource == kSourceLatency) {
    ForEachService([&](Service& svc) { n += svc.RecordServerLatencyById(id, value); });
    return n;
  }
  std::array<double, kResources> values{};
  values[resource] = value;
  ForEachService([&](Service& svc) { n += svc.RecordServerById(id, 1u << resource, values); });
  return n;
}

std::vector<SourceView> Engine::Sources() const {
  std::vector<SourceView> out;
  if (auto v = prometheus_.View()) out.push_back(std::move(*v));
  return out;
}

void Engine::Dispatch(EventBatches& batches) {
  for (auto& [name, evs] : batches) Deliver(name, evs);
}

void Engine::Deliver(const std::string& service, std::vector<PendingEvent>& events) {
  if (events.empty()) return;
  events_.Dispatch(service, events);
  if (auto sink = Sink()) sink->OnEvents(service, events);
}

std::shared_ptr<StateSink> Engine::Sink() const {
  std::lock_guard lock(sink_mu_);
  return sink_;
}

void Engine::SinkChanged() {
  if (auto sink = Sink()) sink->OnChange();
}

std::shared_ptr<StateSink> Engine::SetStateSink(std::shared_ptr<StateSink> sink) {
  std::lock_guard lock(sink_mu_);
  std::swap(sink_, sink);
  return sink;
}

void Engine::RunCycleAt(int64_t now, EventBatches* batches) {
  auto cfg = config();
  std::vector<Service*> services;
  {
    std::lock_guard lock(services_mu_);
    for (auto& [name, svc] : services_) services.push_back(svc.get());
  }
  for (Service* svc : services) {
    std::vector<PendingEvent> evs;
    svc->Cycle(*cfg, now, &evs);
    if (!evs.empty()) batches->emplace_back(svc->name(), std::move(evs));
  }
  if (auto sink = Sink()) sink->OnCycle(now);
}

void Engine::RunCycle() {
  EventBatches batches;
  {
    std::lock_guard lock(cycle_mu_);
    RunCycleAt(Now(), &batches);
  }
  Dispatch(batches);
}

Status Engine::Advance(const char* where, int64_t delta_ns) {
  if (!manual_clock_) {
    return {WT_ERR_WRONG_CLOCK, fmt::format("{}: the engine runs on the real clock; create it "
                                            "with WT_CLOCK_MANUAL to drive time", where)};
  }
  if (delta_ns < 0) {
    return InvalidArgument(fmt::format("{}: delta_ns must be >= 0 (time never runs backwards), "
                                       "got {}", where, delta_ns));
  }
  EventBatches batches;
  {
    std::lock_guard lock(cycle_mu_);
    // The clock ends at kMaxManualNs (146 years) so that now + delta and the next cycle time (at
    // most a day later) never overflow int64: signed overflow is undefined behaviour.
    if (delta_ns > kMaxManualNs - manual_clock_->NowNs()) {
      return InvalidArgument(fmt::format("{}: delta_ns {} would move the manual clock past its "
                                         "end ({} ns)", where, delta_ns, kMaxManualNs));
    }
    const int64_t target = manual_clock_->NowNs() + delta_ns;
    const int64_t interval_ns = config()->controller.interval_ms * kNsPerMs;
    if (target >= next_cycle_ns_ && (target - next_cycle_ns_) / interval_ns >= kMaxCyclesPerAdvance) {
      return InvalidArgument(fmt::format("{}: delta_ns {} spans more than {} controller cycles "
                                         "of controller.interval_ms ({}); advance in smaller steps",
                                         where, delta_ns, kMaxCyclesPerAdvance,
                                         interval_ns / kNsPerMs));
    }
    while (next_cycle_ns_ <= target) {
      manual_clock_->Set(next_cycle_ns_);
      RunCycleAt(next_cycle_ns_, &batches);
      next_cycle_ns_ += config()->controller.interval_ms * kNsPerMs;
    }
    manual_clock_->Set(target);
  }
  Dispatch(batches);
  return Status::Ok();
}

void Engine::ControllerLoop() {
  auto deadline = std::chrono::steady_clock::now();
  std::unique_lock lock(loop_mu_);
  while (!stop_) {
    deadline += std::chrono::milliseconds(config()->controller.interval_ms);
    if (loop_cv_.wait_until(lock, deadline, [&] { return stop_; })) break;
    lock.unlock();
    RunCycle();
    lock.lock();
  }
}

}  // namespace weighted
