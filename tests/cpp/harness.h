// Test harness over the public C API on the manual clock: tests drive the engine the way the
// simulator and the bindings do, so they test the door users use.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "weighted/weighted.h"

namespace weighted::testing {

using nlohmann::json;

// An endpoint spec with its size set, as WT_ENDPOINT_SPEC_INIT would.
inline wt_endpoint_spec Spec(const char* id, double base_weight, void* user = nullptr) {
  wt_endpoint_spec s = WT_ENDPOINT_SPEC_INIT;
  s.id = id;
  s.base_weight = base_weight;
  s.user = user;
  return s;
}

struct Outcome {
  double latency_ms;
  int outcome;
};

class Harness {
 public:
  // Tests of the controller pick by weight, so that what the controller decides is what the
  // traffic shows; the default load-aware picker has tests of its own.
  static constexpr const char* kWeighted = R"({"seed": 42, "picker": {"mode": "weighted"}})";
  explicit Harness(const std::string& config = kWeighted) {
    wt_status s = wt_engine_create(config.data(), config.size(), WT_CLOCK_MANUAL, &engine_);
    EXPECT_EQ(s, WT_OK) << wt_last_error();
    EXPECT_EQ(wt_engine_service(engine_, "svc", &svc_), WT_OK) << wt_last_error();
    wt_engine_set_event_callback(engine_, &Harness::OnEvent, this, nullptr);
  }
  ~Harness() { wt_engine_destroy(engine_); }

  wt_engine* engine() { return engine_; }
  wt_service* svc() { return svc_; }

  // A second service of the engine holding one endpoint: a snapshot with more than one service
  // (null if either call failed, with the test failed).
  wt_service* AddService(const char* name, const char* id, double base_weight) {
    wt_service* s = nullptr;
    EXPECT_EQ(wt_engine_service(engine_, name, &s), WT_OK) << wt_last_error();
    const wt_endpoint_spec spec = Spec(id, base_weight);
    EXPECT_EQ(wt_service_set_endpoints(s, &spec, 1, nullptr, nullptr, nullptr), WT_OK) << wt_last_error();
    return s;
  }

  void Set(const std::vector<std::pair<std::string, double>>& eps) {
    ids_.clear();
    std::vector<wt_endpoint_spec> specs;
    for (auto& [id, w] : eps) ids_.push_back(id);
    for (size_t i = 0; i < eps.size(); ++i) specs.push_back(Spec(ids_[i].c_str(), eps[i].second));
    ASSERT_EQ(wt_service_set_endpoints(svc_, specs.data(), specs.size(), nullptr, nullptr, nullptr), WT_OK) << wt_last_error();
  }

  // Sends `rps` requests per second for `seconds`, answering each with behaviour(id), and
  // reports `resources(id)` once per second. Returns picks per endpoint id.
  std::map<std::string, int> Drive(double seconds, int rps,
                                   const std::function<Outcome(const std::string&)>& behaviour,
                                   const std::function<double(const std::string&)>& cpu = nullptr) {
    std::map<std::string, int> picks;
    const int total = static_cast<int>(seconds * rps);
    for (int i = 0; i < total; ++i) {
      // Exact times (no drift from integer division): request i lands at (i + 1) / rps.
      const int64_t step = 1000000000LL * (i + 1) / rps - 1000000000LL * i / rps;
      EXPECT_EQ(wt_engine_advance(engine_, step), WT_OK);
      if (cpu && i % rps == 0) {
        for (const std::string& id : ids_) {
          if (cpu(id) < 0) continue;  // this endpoint reports no CPU
          wt_resources r{sizeof(wt_resources), WT_RES_CPU, cpu(id), 0, 0, 0};
          EXPECT_EQ(wt_service_report_resources(svc_, id.c_str(), &r), WT_OK) << wt_last_error();
        }
      }
      wt_pick p = WT_PICK_INIT;
      EXPECT_EQ(wt_service_pick(svc_, &p), WT_OK) << wt_last_error();
      const std::string& id = ids_.at(p.index);
      ++picks[id];
      last_flags_[id] |= p.flags;
      Outcome o = behaviour(id);
      EXPECT_EQ(wt_service_complete(svc_, &p, o.latency_ms, o.outcome), WT_OK) << wt_last_error();
    }
    return picks;
  }

  json Snapshot() {
    char* text = nullptr;
    EXPECT_EQ(wt_engine_snapshot_json(engine_, &text, nullptr), WT_OK);
    json j = json::parse(text);
    wt_free(text);
    return j;
  }
  json Endpoint(const std::string& id) {
    const json snap = Snapshot();
    for (auto& ep : snap["services"][0]["endpoints"]) {
      if (ep["id"] == id) return ep;
    }
    ADD_FAILURE() << "no endpoint " << id;
    return {};
  }

  struct Seen {
    int type;
    std::string endpoint;
    double old_weight, new_weight;
    std::string reason;
    int64_t time_ns;
  };
  const std::vector<Seen>& events() const { return events_; }
  int Count(int type, const std::string& endpoint = "") const {
    int n = 0;
    for (auto& e : events_) n += e.type == type && (endpoint.empty() || e.endpoint == endpoint);
    return n;
  }
  uint32_t flags(const std::string& id) { return last_flags_[id]; }

 private:
  static void OnEvent(void* user, const wt_event* ev) {
    static_cast<Harness*>(user)->events_.push_back(
        {ev->type, ev->endpoint, ev->old_weight, ev->new_weight, ev->reason, ev->time_ns});
  }

  wt_engine* engine_ = nullptr;
  wt_service* svc_ = nullptr;
  std::vector<std::string> ids_;
  std::vector<Seen> events_;
  std::map<std::string, uint32_t> last_flags_;
};

inline Outcome Ok(double ms = 20) { return {ms, WT_OUTCOME_SUCCESS}; }

}  // namespace weighted::testing
