// Fuzzes sequences of C API calls decoded from the input: create, service, set endpoints (with
// duplicates, empty and over-long ids, bad weights), pick, complete, cancel, report by key / id /
// batch with any double (NaN, inf, negative, huge), resources, reload with valid and invalid
// configs, snapshot, Prometheus, events, advance on the manual clock, run_cycle, destroy.
//
// Invariants checked after every call (a violation aborts):
//   - every status is a documented one, never WT_ERR_INTERNAL; WT_OK clears wt_last_error(),
//     any other status sets a message;
//   - a pick names an endpoint of the set in force: `epoch` says which set_endpoints call, and
//     `index` is a position in it whose id is the one the key maps to;
//   - snapshots are JSON, and every outcome the engine accepted is in its totals exactly once:
//     per service, the sum of live `totals` and `removed_totals` equals the count of WT_OK
//     reports, and `stale_reports` the count of WT_ERR_STALE ones;
//   - rejected calls leave the snapshot unchanged (checked for set_endpoints and reload);
//   - set_endpoints hands back each endpoint's key (the one endpoint_key gives), a pick's user
//     pointer is the one its spec gave, and every user pointer the engine took is released
//     exactly once by the time the engine is destroyed (or its service removed), never one it
//     refused.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "weighted/weighted.h"

namespace {

using nlohmann::json;


[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_api: %s\n", what.c_str());
  std::abort();
}

// User pointers the engine holds: tokens are distinct addresses that point at nothing.
std::map<uintptr_t, int> g_held;
uintptr_t g_next_token = 0x1000;

void ReleaseToken(void* user) {
  auto it = g_held.find(reinterpret_cast<uintptr_t>(user));
  if (it == g_held.end()) Fail("released a user pointer the engine does not hold (twice?)");
  g_held.erase(it);
}

// Reads the fuzz input front to back; past the end every read is 0.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ >= end_; }
  uint8_t Byte() { return p_ < end_ ? *p_++ : 0; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | Byte();
    return v;
  }
  uint64_t U64() { return (uint64_t{U32()} << 32) | U32(); }
  // A small number below n, most of the time; n > 0.
  uint32_t Below(uint32_t n) { return Byte() % n; }
  std::string Bytes(size_t max) {
    const size_t n = std::min<size_t>(Byte() % (max + 1), end_ - p_);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  double Double() {
    static const double kSpecial[] = {0.0, -0.0, 1.0, 20.0, 500.0, 1e-300, -1.0, 1e12,
                                      3600000.0, 3600000.0001,
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::denorm_min(),
                                      std::numeric_limits<double>::max(), 0.5};
    const uint8_t kind = Byte();
    if (kind < 160) return kSpecial[kind % std::size(kSpecial)];
    if (kind < 230) return double(U32() % 100000) / 100.0;
    uint64_t bits = U64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

const char* const kConfigs[] = {
    "{}",
    R"({"seed": 7})",
    R"({"seed": 7, "profile": "article"})",
    R"({"seed": 7, "picker": {"mode": "load_aware"}})",
    R"({"seed": 7, "controller": {"interval_ms": 1000}, "window": {"length_ms": 2000, "min_requests": 1},
        "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}],
        "isolation": {"max_ms": 3000}})",
    R"({"seed": 7, "limits": {"max_services": 2, "max_endpoints_per_service": 3,
        "max_latency_ms": 100}})",
    R"({"seed": 7, "panic": {"enabled": false}, "slow_start": {"window_ms": 0}, "rules": []})",
    R"({"seed": 7, "events": {"queue_capacity": 1}, "isolation": {"probe_share": 0}})",
    // rejected ones
    R"({"controller": {"max_step": 2}})",
    R"({"window": {"length_ms": 10}, "controller": {"interval_ms": 5000}})",
    R"({"profile": )",
    R"({"limits": {"max_services": 0}})",
    R"({"seed": 1, "seed": 2})",
    "[]",
};

const char* const kIds[] = {"a", "b", "c", "d", "e", "10.0.0.7:8080", "x", "\xff\xfe", "",
                            "emoji-\xf0\x9f\x98\x80", "quote\"back\\slash\nnewline"};

constexpr int64_t kNsPerMs = 1000000;

struct ServiceModel {
  wt_service* handle = nullptr;
  std::string name;
  std::map<uint64_t, std::vector<std::string>> sets;  // epoch -> ids in order
  std::map<uint64_t, std::vector<void*>> users;        // epoch -> user pointers in order
  uint64_t epoch = 0;
  uint64_t recorded = 0;  // WT_OK outcomes
  uint64_t stale = 0;     // WT_ERR_STALE outcomes (counted by the engine)
  std::vector<wt_pick> picks;
};

class Driver {
 public:
  explicit Driver(Input& in) : in_(in) {}
  ~Driver() { Destroy(); }

  void Step() {
    const uint8_t op = in_.Byte() % 21;
    if (!engine_ && op != 19) return Create();
    switch (op) {
      case 0: return Create();
      case 1: return GetService();
      case 2: return SetEndpoints();
      case 3: case 4: return Pick();
      case 5: return Complete(true);
      case 6: return Complete(false);
      case 7: return ReportKey();
      case 8: return ReportId();
      case 9: return ReportBatch();
      case 10: return ReportResources();
      case 11: return Reload();
      case 12: return CheckSnapshot();
      case 13: return Prometheus();
      case 14: return Advance();
      case 15: Expect(wt_engine_run_cycle(engine_), {WT_OK}, "run_cycle"); return;
      case 16: return PollEvents();
      case 17: return Lookup();
      case 18: return Destroy();
      case 19: return ValidateBytes();
      case 20: return RemoveService();
    }
  }

  void Finish() {
    if (engine_) CheckSnapshot();
  }

 private:
  // Checks a status against the ones allowed and the error-message contract.
  wt_status Expect(wt_status s, std::initializer_list<wt_status> allowed, const char* call) {
    bool ok = false;
    for (wt_status a : allowed) ok |= a == s;
    const std::string msg = wt_last_error();
    if (!ok) Fail(std::string(call) + ": unexpected " + wt_status_name(s) + ": " + msg);
    if (s == WT_OK && !msg.empty()) Fail(std::string(call) + ": WT_OK left a message: " + msg);
    if (s != WT_OK && msg.empty()) Fail(std::string(call) + ": " + wt_status_name(s) + " without a message");
    return s;
  }

  std::string Snapshot() {
    char* text = nullptr;
    size_t len = 0;
    Expect(wt_engine_snapshot_json(engine_, &text, &len), {WT_OK}, "snapshot_json");
    std::string s(text, len);
    wt_free(text);
    return s;
  }

  ServiceModel* AnyService() {
    if (services_.empty()) return nullptr;
    return &services_[in_.Below(services_.size())];
  }

  std::string Config() {
    if (in_.Byte() < 230) return kConfigs[in_.Below(std::size(kConfigs))];
    std::string cfg = in_.Bytes(200);
    // A state file at a path the fuzzer made up would be created (as whoever runs it): such a
    // document is replaced by a known one. The state file's reader has a fuzzer of its own.
    char* resolved = nullptr;
    if (wt_config_resolve(cfg.data(), cfg.size(), &resolved) == WT_OK &&
        std::string_view(resolved).find("\"state_file\": \"\"") == std::string_view::npos) {
      cfg = kConfigs[0];
    }
    wt_free(resolved);
    return cfg;
  }

  void Create() {
    Destroy();
    const std::string cfg = Config();
    const wt_status s = Expect(wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_MANUAL, &engine_),
                               {WT_OK, WT_ERR_CONFIG_PARSE, WT_ERR_CONFIG_INVALID, WT_ERR_LIMIT},
                               "engine_create");
    if (s != WT_OK) engine_ = nullptr;
  }

  void Destroy() {
    if (engine_) CheckSnapshot();
    wt_engine_destroy(engine_);
    engine_ = nullptr;
    services_.clear();
    if (!g_held.empty()) Fail("the destroyed engine did not release every user pointer it took");
  }

  void RemoveService() {
    if (services_.empty()) return;
    const size_t i = in_.Below(services_.size());
    Expect(wt_service_remove(services_[i].handle), {WT_OK}, "service_remove");
    services_.erase(services_.begin() + i);
  }

  void GetService() {
    std::string name;
    const uint8_t k = in_.Byte();
    if (k < 200) name = "svc" + std::to_string(k % 4);
    else if (k < 250) name = in_.Bytes(40);
    else name = std::string(257, 's');
    wt_service* h = nullptr;
    const wt_status s = Expect(wt_engine_service(engine_, name.c_str(), &h),
                               {WT_OK, WT_ERR_INVALID_ARGUMENT, WT_ERR_LIMIT}, "engine_service");
    if (s != WT_OK) return;
    for (auto& m : services_) {
      if (m.handle == h) return;
    }
    ServiceModel m;
    m.handle = h;
    m.name = name.c_str();  // as the C API sees it: up to the first NUL
    services_.push_back(std::move(m));
  }

  void SetEndpoints() {
    ServiceModel* m = AnyService();
    if (!m) return;
    const size_t n = in_.Byte() % 9;
    std::vector<std::string> ids(n);
    // Twice the elements: a bad size the driver sets below (up to 47, with 32-byte elements) is
    // the stride the engine steps by, and the array must hold what that stride reaches.
    std::vector<wt_endpoint_spec> specs(2 * n, wt_endpoint_spec WT_ENDPOINT_SPEC_INIT);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t k = in_.Byte();
      if (k < 240) ids[i] = kIds[k % std::size(kIds)];
      else if (k < 250) ids[i] = in_.Bytes(20);
      else ids[i] = std::string(257, 'i');
    }
    for (size_t i = 0; i < n; ++i) {
      const uint8_t w = in_.Byte();
      specs[i].id = ids[i].c_str();
      specs[i].base_weight = w < 200 ? 1 + w % 100 : in_.Double();
      if (in_.Byte() & 1) specs[i].user = reinterpret_cast<void*>(g_next_token += 16);
    }
    if (n > 0 && in_.Byte() == 255) specs[in_.Below(n)].size = in_.Below(48);  // a bad size
    wt_endpoints_options options = WT_ENDPOINTS_OPTIONS_INIT;
    options.release_user = ReleaseToken;
    const wt_endpoint_spec* p = specs.data();
    if (n == 0 && in_.Byte() & 1) p = nullptr;  // NULL with count 0 is an empty set
    const std::string before = Snapshot();
    // With or without the optional outputs; the epoch must be the one the model expects.
    const bool with_epoch = in_.Byte() & 1;
    const bool with_keys = in_.Byte() & 1;
    const bool with_release = in_.Byte() & 1;
    uint64_t epoch = 0;
    std::vector<uint64_t> keys(n, 0);
    const wt_status s = Expect(
        wt_service_set_endpoints(m->handle, p, n, with_release ? &options : nullptr,
                                 with_keys ? keys.data() : nullptr, with_epoch ? &epoch : nullptr),
        {WT_OK, WT_ERR_INVALID_ARGUMENT, WT_ERR_DUPLICATE, WT_ERR_LIMIT}, "set_endpoints");
    if (s != WT_OK) {
      if (Snapshot() != before) Fail("a rejected set_endpoints changed the state");
      if (epoch != 0) Fail("a rejected set_endpoints wrote its epoch");
      for (uint64_t k : keys) {
        if (k != 0) Fail("a rejected set_endpoints wrote keys");
      }
      return;
    }
    if (with_epoch && epoch != m->epoch + 1) Fail("set_endpoints named another epoch");
    std::vector<std::string> set;
    std::vector<void*> users;
    for (size_t i = 0; i < n; ++i) {
      set.push_back(ids[i].c_str());
      users.push_back(specs[i].user);
      // Held only with a release function: without one the engine never gives them back.
      if (specs[i].user && with_release) g_held[reinterpret_cast<uintptr_t>(specs[i].user)] = 1;
    }
    m->sets[++m->epoch] = set;
    m->users[m->epoch] = users;
    for (size_t i = 0; with_keys && i < n; ++i) {
      uint64_t k = 0;
      Expect(wt_service_endpoint_key(m->handle, set[i].c_str(), &k), {WT_OK}, "endpoint_key");
      if (k != keys[i]) Fail("set_endpoints handed back another key than endpoint_key gives");
    }
  }

  void Pick() {
    ServiceModel* m = AnyService();
    if (!m) return;
    wt_pick p = WT_PICK_INIT;
    const wt_status s = Expect(wt_service_pick(m->handle, &p), {WT_OK, WT_ERR_NO_ENDPOINT}, "pick");
    if (s != WT_OK) {
      if (m->epoch && !m->sets[m->epoch].empty()) Fail("no endpoint picked from a non-empty set");
      return;
    }
    if (p.epoch != m->epoch) Fail("a pick saw an epoch that is not the one in force");
    const auto& set = m->sets[p.epoch];
    if (p.index >= set.size()) Fail("a pick index outside its set");
    if (p.user != m->users[p.epoch][p.index]) Fail("a pick's user pointer is not its spec's");
    char id[300];
    size_t len = 0;
    Expect(wt_service_endpoint_id(m->handle, p.key, id, sizeof id, &len), {WT_OK}, "endpoint_id");
    if (set[p.index] != std::string(id, len)) Fail("a pick's key and index name different endpoints");
    m->picks.push_back(p);
    if (m->picks.size() > 64) m->picks.erase(m->picks.begin());
  }

  wt_pick SomePick(ServiceModel* m) {
    if (!m->picks.empty() && in_.Byte() < 220) {
      const size_t i = in_.Below(m->picks.size());
      wt_pick p = m->picks[i];
      m->picks.erase(m->picks.begin() + i);  // each pick is finished at most once
      return p;
    }
    wt_pick p = WT_PICK_INIT;
    p.key = in_.U64();
    p.epoch = in_.U32();
    p.index = in_.U32();
    p.flags = in_.Byte() & ~uint32_t{WT_PICK_TRACKED};  // a forged pick holds no in-flight count
    return p;
  }

  int Outcome() {
    const uint8_t o = in_.Byte();
    return o < 240 ? o % WT_OUTCOME_COUNT : static_cast<int>(in_.U32());
  }

  void Count(ServiceModel* m, wt_status s) {
    if (s == WT_OK) ++m->recorded;
    else if (s == WT_ERR_STALE) ++m->stale;
  }

  void Complete(bool record) {
    ServiceModel* m = AnyService();
    if (!m) return;
    const wt_pick p = SomePick(m);
    if (!record) {
      Expect(wt_service_cancel(m->handle, &p), {WT_OK, WT_ERR_STALE}, "cancel");
      return;  // a cancel is not an outcome and never counts as stale
    }
    const double latency = in_.Double();
    const int outcome = Outcome();
    const wt_status s = Expect(wt_service_complete(m->handle, &p, latency, outcome),
                               {WT_OK, WT_ERR_STALE, WT_ERR_INVALID_ARGUMENT}, "complete");
    Count(m, s);
  }

  uint64_t SomeKey(ServiceModel* m) {
    if (!m->picks.empty() && in_.Byte() < 200) return m->picks[in_.Below(m->picks.size())].key;
    return in_.U64();
  }

  void ReportKey() {
    ServiceModel* m = AnyService();
    if (!m) return;
    const uint64_t key = SomeKey(m);
    const double latency = in_.Double();
    const int outcome = Outcome();
    Count(m, Expect(wt_service_report_key(m->handle, key, latency, outcome),
                    {WT_OK, WT_ERR_STALE, WT_ERR_INVALID_ARGUMENT}, "report_key"));
  }

  std::string SomeId() {
    const uint8_t k = in_.Byte();
    return k < 240 ? kIds[k % std::size(kIds)] : in_.Bytes(20);
  }

  void ReportId() {
    ServiceModel* m = AnyService();
    if (!m) return;
    const std::string id = SomeId();
    const double latency = in_.Double();
    const int outcome = Outcome();
    Count(m, Expect(wt_service_report(m->handle, id.c_str(), latency, outcome),
                    {WT_OK, WT_ERR_NOT_FOUND, WT_ERR_INVALID_ARGUMENT}, "report"));
  }

  void ReportBatch() {
    ServiceModel* m = AnyService();
    if (!m) return;
    std::vector<wt_report> batch(in_.Byte() % 6, wt_report WT_REPORT_INIT);
    for (wt_report& r : batch) {
      r.key = SomeKey(m);
      r.latency_ms = in_.Double();
      r.outcome = Outcome();
      r.status = -1;
    }
    size_t recorded = 0;
    const wt_status s = Expect(wt_service_report_batch(m->handle, batch.data(), batch.size(), &recorded),
                               {WT_OK, WT_ERR_STALE, WT_ERR_INVALID_ARGUMENT}, "report_batch");
    size_t ok = 0;
    wt_status first = WT_OK;
    for (const wt_report& r : batch) {
      Count(m, static_cast<wt_status>(r.status));
      ok += r.status == WT_OK;
      if (r.status != WT_OK && first == WT_OK) first = static_cast<wt_status>(r.status);
    }
    if (ok != recorded || s != first) Fail("report_batch's entry statuses disagree with its result");
  }

  void ReportResources() {
    ServiceModel* m = AnyService();
    if (!m) return;
    const std::string id = SomeId();
    wt_resources r = WT_RESOURCES_INIT;
    r.present = in_.Byte() < 240 ? in_.Byte() & 0xF : in_.U32();
    r.cpu = in_.Double();
    r.memory = in_.Byte() < 128 ? 0.5 : in_.Double();
    r.thread_pool = in_.Byte() < 128 ? 0.25 : in_.Double();
    r.connection_pool = in_.Byte() < 128 ? 1.0 : in_.Double();
    Expect(wt_service_report_resources(m->handle, id.c_str(), &r),
           {WT_OK, WT_ERR_NOT_FOUND, WT_ERR_INVALID_ARGUMENT}, "report_resources");
  }

  void Reload() {
    const std::string cfg = Config();
    const std::string before = Snapshot();
    const wt_status s = Expect(wt_engine_reload(engine_, cfg.data(), cfg.size()),
                               {WT_OK, WT_ERR_CONFIG_PARSE, WT_ERR_CONFIG_INVALID, WT_ERR_LIMIT},
                               "reload");
    if (s != WT_OK && Snapshot() != before) Fail("a rejected reload changed the state");
  }

  void CheckSnapshot() {
    const std::string text = Snapshot();
    const json snap = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (snap.is_discarded()) Fail("the snapshot is not JSON: " + text);
    std::map<std::string, const json*> by_name;
    for (const json& s : snap.at("services")) by_name[s.at("name").get<std::string>()] = &s;
    for (const ServiceModel& m : services_) {
      auto it = by_name.find(m.name);
      if (it == by_name.end()) Fail("service missing from the snapshot: " + m.name);
      const json& s = *it->second;
      uint64_t counted = 0;
      for (auto& [k, v] : s.at("removed_totals").items()) counted += v.get<uint64_t>();
      for (const json& ep : s.at("endpoints")) {
        for (auto& [k, v] : ep.at("totals").items()) counted += v.get<uint64_t>();
      }
      if (counted != m.recorded) {
        Fail("service " + m.name + ": totals count " + std::to_string(counted) + " outcomes, the " +
             "engine accepted " + std::to_string(m.recorded));
      }
      if (s.at("stale_reports").get<uint64_t>() != m.stale) Fail("stale_reports disagrees");
      if (s.at("epoch").get<uint64_t>() != m.epoch) Fail("epoch disagrees");
      const auto& set = m.epoch ? m.sets.at(m.epoch) : std::vector<std::string>{};
      if (s.at("endpoints").size() != set.size()) Fail("endpoint count disagrees");
      for (size_t i = 0; i < set.size(); ++i) {
        if (s.at("endpoints")[i].at("id").get<std::string>() != set[i]) Fail("endpoint order disagrees");
      }
    }
  }

  void Prometheus() {
    char* text = nullptr;
    size_t len = 0;
    Expect(wt_engine_prometheus(engine_, &text, &len), {WT_OK}, "prometheus");
    if (std::strlen(text) != len) Fail("prometheus length disagrees");
    wt_free(text);
  }

  void Advance() {
    // Bounded: at most ~2 minutes of engine time per call, so that a config with a 10 ms cycle
    // runs at most ~12000 cycles.
    int64_t delta;
    const uint8_t k = in_.Byte();
    if (k < 200) delta = int64_t{k % 50} * 100 * kNsPerMs;  // 0 .. 4.9 s
    else if (k < 250) delta = int64_t{in_.U32() % 120000} * kNsPerMs;
    else delta = -int64_t{in_.U32()};
    Expect(wt_engine_advance(engine_, delta), {WT_OK, WT_ERR_INVALID_ARGUMENT}, "advance");
  }

  void PollEvents() {
    for (int i = 0; i < 8; ++i) {
      wt_event ev = WT_EVENT_INIT;
      int has = 0;
      Expect(wt_engine_poll_event(engine_, &ev, &has), {WT_OK}, "poll_event");
      if (!has) return;
      if (!ev.service || !ev.endpoint || !ev.reason) Fail("an event with a NULL string");
      if (!json::accept(ev.reason)) Fail(std::string("an event reason is not JSON: ") + ev.reason);
    }
  }

  void Lookup() {
    ServiceModel* m = AnyService();
    if (!m) return;
    const std::string id = SomeId();
    uint64_t key = 0;
    const wt_status s = Expect(wt_service_endpoint_key(m->handle, id.c_str(), &key),
                               {WT_OK, WT_ERR_NOT_FOUND}, "endpoint_key");
    if (s != WT_OK) return;
    char buf[300];
    size_t len = 0;
    const size_t cap = in_.Byte() < 128 ? sizeof buf : in_.Below(8);
    const wt_status t = Expect(wt_service_endpoint_id(m->handle, key, buf, cap, &len),
                               {WT_OK, WT_ERR_INVALID_ARGUMENT}, "endpoint_id");
    if (len != std::strlen(id.c_str())) Fail("endpoint_id length disagrees");
    if (t == WT_OK && id.c_str() != std::string(buf)) Fail("endpoint_id round trip");
  }

  void ValidateBytes() {
    const std::string cfg = in_.Bytes(255);
    Expect(wt_config_validate(cfg.data(), cfg.size()),
           {WT_OK, WT_ERR_CONFIG_PARSE, WT_ERR_CONFIG_INVALID, WT_ERR_LIMIT}, "config_validate");
  }

  Input& in_;
  wt_engine* engine_ = nullptr;
  std::vector<ServiceModel> services_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Driver d(in);
  for (int steps = 0; steps < 400 && !in.done(); ++steps) d.Step();
  d.Finish();
  return 0;
}
