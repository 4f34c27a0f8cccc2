#include "runtime/engine.h"

#include <fmt/format.h>

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
      events_(config_->events.queue_capacity) {
  if (clock_mode == WT_CLOCK_MANUAL) {
    auto c = std::make_unique<ManualClock>();
    manual_clock_ = c.get();
    clock_ = std::move(c);
  } else {
    clock_ = std::make_unique<RealClock>();
  }
  next_cycle_ns_ = config_->controller.interval_ms * kNsPerMs;
}

Status Engine::Create(std::string_view json, int clock_mode, std::unique_ptr<Engine>* out) {
  if (clock_mode != WT_CLOCK_REAL && clock_mode != WT_CLOCK_MANUAL) {
    return InvalidArgument(fmt::format("wt_engine_create: clock_mode must be WT_CLOCK_REAL (0) or "
                                       "WT_CLOCK_MANUAL (1), got {}", clock_mode));
  }
  Config cfg;
  Status s = ParseConfig(json, &cfg);
  if (!s.ok()) return s;
  std::unique_ptr<Engine> e(new Engine(std::move(cfg), clock_mode));
  if (clock_mode == WT_CLOCK_REAL) e->controller_ = std::thread([p = e.get()] { p->ControllerLoop(); });
  *out = std::move(e);
  return Status::Ok();
}

Engine::~Engine() {
  {
    std::lock_guard lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (controller_.joinable()) controller_.join();
  magic_ = 0;
}

std::shared_ptr<const Config> Engine::config() const {
  std::lock_guard lock(config_mu_);
  return config_;
}

Status Engine::Reload(std::string_view json) {
  Config cfg;
  Status s = ParseConfig(json, &cfg);
  if (!s.ok()) return s;
  auto next = std::make_shared<const Config>(std::move(cfg));
  std::vector<Service*> services;
  {
    std::unique_lock membership(membership_mu_);
    std::lock_guard lock(services_mu_);
    if (services_.size() > next->limits.max_services) {
      return {WT_ERR_LIMIT, fmt::format("wt_engine_reload: the engine has {} services, more than "
                                        "the new limits.max_services = {}",
                                        services_.size(), next->limits.max_services)};
    }
    for (auto& [name, svc] : services_) {
      size_t n = 0;
      svc->Inspect([&](Service& s) { n = s.endpoints().size(); });
      if (n > next->limits.max_endpoints_per_service) {
        return {WT_ERR_LIMIT, fmt::format("wt_engine_reload: service \"{}\" has {} endpoints, more "
                                          "than the new limits.max_endpoints_per_service = {}",
                                          name, n, next->limits.max_endpoints_per_service)};
      }
      services.push_back(svc.get());
    }
    std::lock_guard config_lock(config_mu_);
    config_ = next;
  }
  events_.SetCapacity(next->events.queue_capacity);
  EventBatches batches;
  for (Service* svc : services) {
    std::vector<PendingEvent> evs;
    svc->Republish(*next, &evs);
    if (!evs.empty()) batches.emplace_back(svc, std::move(evs));
  }
  std::vector<PendingEvent> ev{{WT_EVENT_CONFIG_RELOADED, Now(), "", 0, 0,
                                fmt::format(R"({{"profile":"{}"}})", next->profile)}};
  events_.Dispatch("", ev);
  Dispatch(batches);
  return Status::Ok();
}

Status Engine::GetService(const char* name, Service** out) {
  const std::string_view n(name);
  if (n.empty() || n.size() > kMaxServiceName) {
    return InvalidArgument(fmt::format("wt_engine_service: name must be 1..{} bytes, got {}",
                                       kMaxServiceName, n.size()));
  }
  if (!IsUtf8(n)) return InvalidArgument("wt_engine_service: name is not valid UTF-8");
  auto cfg = config();
  std::lock_guard lock(services_mu_);
  auto it = services_.find(n);
  if (it != services_.end()) {
    *out = it->second.get();
    return Status::Ok();
  }
  if (services_.size() >= cfg->limits.max_services) {
    return {WT_ERR_LIMIT, fmt::format("wt_engine_service: cannot create service \"{}\": "
                                      "limits.max_services = {} reached",
                                      n, cfg->limits.max_services)};
  }
  auto svc = std::make_unique<Service>(std::string(n), *this, reclaimer_, *clock_, *cfg);
  *out = svc.get();
  services_.emplace(std::string(n), std::move(svc));
  return Status::Ok();
}

Status Engine::SetEndpoints(Service* svc, const wt_endpoint_spec* specs, size_t count,
                            uint64_t* epoch) {
  std::vector<PendingEvent> evs;
  Status s;
  {
    std::shared_lock membership(membership_mu_);
    s = svc->SetEndpoints(specs, count, *config(), &evs, epoch);
  }
  events_.Dispatch(svc->name(), evs);
  return s;
}

void Engine::Dispatch(EventBatches& batches) {
  for (auto& [svc, evs] : batches) events_.Dispatch(svc->name(), evs);
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
    if (!evs.empty()) batches->emplace_back(svc, std::move(evs));
  }
}

void Engine::RunCycle() {
  EventBatches batches;
  {
    std::lock_guard lock(cycle_mu_);
    RunCycleAt(Now(), &batches);
  }
  Dispatch(batches);
}

Status Engine::Advance(int64_t delta_ns) {
  if (!manual_clock_) {
    return {WT_ERR_WRONG_CLOCK, "wt_engine_advance: the engine runs on the real clock; "
                                "create it with WT_CLOCK_MANUAL to drive time"};
  }
  if (delta_ns < 0) {
    return InvalidArgument(fmt::format("wt_engine_advance: delta_ns must be >= 0 (time never "
                                       "runs backwards), got {}", delta_ns));
  }
  EventBatches batches;
  {
    std::lock_guard lock(cycle_mu_);
    // The clock ends at kMaxManualNs (146 years) so that now + delta and the next cycle time (at
    // most a day later) never overflow int64: signed overflow is undefined behaviour.
    if (delta_ns > kMaxManualNs - manual_clock_->NowNs()) {
      return InvalidArgument(fmt::format("wt_engine_advance: delta_ns {} would move the manual "
                                         "clock past its end ({} ns)", delta_ns, kMaxManualNs));
    }
    const int64_t target = manual_clock_->NowNs() + delta_ns;
    const int64_t interval_ns = config()->controller.interval_ms * kNsPerMs;
    if (target >= next_cycle_ns_ && (target - next_cycle_ns_) / interval_ns >= kMaxCyclesPerAdvance) {
      return InvalidArgument(fmt::format("wt_engine_advance: delta_ns {} spans more than {} "
                                         "controller cycles of controller.interval_ms ({}); "
                                         "advance in smaller steps",
                                         delta_ns, kMaxCyclesPerAdvance, interval_ns / kNsPerMs));
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
