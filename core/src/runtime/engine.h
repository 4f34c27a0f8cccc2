// The engine: config, clock, services, the controller loop and the event queue. Everything the
// C API exposes hangs off one Engine; the read-only views of it (export/) walk its services.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>

#include "config/config.h"
#include "runtime/event_queue.h"
#include "runtime/prometheus_source.h"
#include "runtime/reclaim.h"
#include "runtime/service.h"
#include "runtime/state_sink.h"
#include "util/clock.h"
#include "util/status.h"

namespace weighted {

class Engine {
 public:
  // `where` names the C entry point being served, for messages.
  static Status Create(const char* where, std::string_view json, int clock_mode,
                       std::unique_ptr<Engine>* out);
  ~Engine();

  Status Reload(const char* where, std::string_view json);
  int64_t Now() const { return clock_->NowNs(); }
  bool manual() const { return clock_->manual(); }
  Status Advance(const char* where, int64_t delta_ns);
  void RunCycle();
  Status GetService(const char* where, const char* name, Service** out);
  Status SetEndpoints(const char* where, Service* svc, const SpecArray& specs,
                      wt_release_fn release, uint64_t* keys, uint64_t* epoch);
  // Takes the service out of the engine; it is freed once no reader can hold it.
  Status RemoveService(const char* where, Service* svc);

  EventQueue& events() { return events_; }
  std::shared_ptr<const Config> config() const;

  // Calls fn(Service&) for each service in name order, holding the service list's lock (so no
  // service is created meanwhile); fn inspects a service through Service::Inspect.
  template <typename Fn> void ForEachService(Fn&& fn) {
    std::lock_guard lock(services_mu_);
    for (auto& [name, svc] : services_) fn(*svc);
  }
  // Frees what no reader holds any more: settles the totals of removed endpoints before a view.
  void CollectRetired() { reclaimer_.Collect(); }
  // The metric sources the config turned on, as the snapshot shows them.
  std::vector<SourceView> Sources() const;

  // Installs `sink` (nullptr: none) and returns the one it replaces; the caller destroys that
  // after this returns (no call of it runs then). A sink must not outlive the engine.
  std::shared_ptr<StateSink> SetStateSink(std::shared_ptr<StateSink> sink);
  std::shared_ptr<StateSink> state_sink() const { return Sink(); }

  // Detects a destroyed or foreign handle on a best-effort basis at the C boundary.
  bool Valid() const { return magic_ == kMagic; }

 private:
  Engine(Config cfg, int clock_mode);
  // By service name: a service may be removed before its events are dispatched.
  using EventBatches = std::vector<std::pair<std::string, std::vector<PendingEvent>>>;
  // Requires cycle_mu_. Appends the cycle's events to `out`; the caller dispatches them after
  // releasing cycle_mu_, so a callback may call back into the engine.
  void RunCycleAt(int64_t now, EventBatches* out);
  void ControllerLoop();
  void Dispatch(EventBatches& batches);
  // Queues and delivers one service's events, and hands them to the state sink.
  void Deliver(const std::string& service, std::vector<PendingEvent>& events);
  std::shared_ptr<StateSink> Sink() const;
  void SinkChanged();

  static constexpr uint64_t kMagic = 0x77742d656e67696eull;  // "wt-engin"
  uint64_t magic_ = kMagic;

  std::unique_ptr<Clock> clock_;
  ManualClock* manual_clock_ = nullptr;

  mutable std::mutex config_mu_;
  std::shared_ptr<const Config> config_;
  // set_endpoints holds it shared, reload exclusively: a reload checks the sets' sizes against
  // its new limits, and no set may grow under the old limits between that check and the swap.
  std::shared_mutex membership_mu_;

  // Declared before the services: services retire snapshots into it, so it must outlive them.
  Reclaimer reclaimer_;
  EventQueue events_;

  // Held by whatever walks the services (exports, reload's republish) and by removal.
  std::mutex services_mu_;
  std::map<std::string, std::unique_ptr<Service>, std::less<>> services_;

  std::mutex cycle_mu_;  // one controller cycle at a time; a removal waits for the cycle to end
  int64_t next_cycle_ns_ = 0;

  // Held only to copy or swap the pointer: a sink's calls run without it, and a swap waits for
  // none of them (the old sink lives until its last running call returns).
  mutable std::mutex sink_mu_;
  std::shared_ptr<StateSink> sink_;

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stop_ = false;
  std::thread controller_;

  // Last: it records into the services and raises events, so it stops first (~Engine).
  PrometheusSource prometheus_;
  // A source's value for every service's endpoint with this id; how many took it.
  size_t RecordFromSource(std::string_view id, int resource, double value);
};

}  // namespace weighted
