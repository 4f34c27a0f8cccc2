// Stress (docs/reliability.md, "Stress"): picker threads pick, complete, cancel and report (by key, by id, in
// batches, resources) while one thread churns the endpoint set, reloads the config and moves
// time, and another reads snapshots. Bounded by operation counts, not by time.
//
// Afterwards:
//   - every outcome the engine accepted (WT_OK) is in its totals exactly once: the live
//     endpoints' `totals` plus the service's `removed_totals` equal what the threads recorded,
//     and `stale_reports` equals the WT_ERR_STALE answers they got: nothing lost, nothing twice;
//   - no pick named an endpoint outside the set in force at that moment: the test knows every
//     set it applied (epoch e is the e-th set_endpoints call), the pick's epoch lies between the
//     newest set published before the pick began and the newest published after it returned,
//     and the pick's index and key name the same endpoint of that set;
//   - every call answered with a status its contract allows, and every tracked pick was
//     finished exactly once (in-flight counts are back to 0).
// Runs on the manual clock (the churn thread advances it) and on the real clock (the engine's
// controller thread runs cycles every 10 ms on its own). TSan runs it too (make test-tsan).
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace weighted::testing {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kOpsPerThread = 6000;  // sanitizers slow every call down 5-20x
#else
constexpr int kOpsPerThread = 30000;
#endif
constexpr int kPickers = 3;
constexpr int kSets = 97;

struct Counts {
  std::atomic<uint64_t> recorded{0}, stale{0}, no_endpoint{0}, picks{0}, not_found{0};
  std::atomic<uint64_t> bad{0};  // contract violations; must stay 0
  std::mutex mu;
  std::vector<std::string> problems;  // the first few, for the failure message
  void Bad(const std::string& what) {
    ++bad;
    std::lock_guard lock(mu);
    if (problems.size() < 10) problems.push_back(what);
  }
  void Outcome(wt_status s, const char* call) {
    if (s == WT_OK) ++recorded;
    else if (s == WT_ERR_STALE) ++stale;
    else Bad(std::string(call) + ": " + wt_status_name(s) + " " + wt_last_error());
  }
};

// Set k: a window of 1..6 ids sliding over 10, weights varying, every 13th set empty; so
// endpoints come, stay (keeping their key and state) and go.
std::vector<std::vector<std::pair<std::string, double>>> MakeSets() {
  std::vector<std::vector<std::pair<std::string, double>>> sets(kSets);
  for (int k = 0; k < kSets; ++k) {
    if (k % 13 == 12) continue;
    const int size = 1 + (k * 7) % 6;
    for (int j = 0; j < size; ++j) {
      sets[k].emplace_back("ep" + std::to_string((k + j) % 10), 1.0 + (k + j) % 4);
    }
  }
  return sets;
}

class Stress : public ::testing::TestWithParam<int> {};

TEST_P(Stress, ChurnReloadAndReportsLoseNothingAndPickOnlyLiveEndpoints) {
  const int clock = GetParam();
  const std::string cfg_a = R"({"seed": 3, "picker": {"mode": "load_aware"},
      "controller": {"interval_ms": 10, "cooldown_ms": 10}, "window": {"length_ms": 20, "min_requests": 1},
      "slow_start": {"window_ms": 50}})";
  const std::string cfg_b = R"({"seed": 3, "profile": "article",
      "controller": {"interval_ms": 10, "cooldown_ms": 20}, "window": {"length_ms": 30, "min_requests": 2},
      "rules": [{"metric": "error_rate", "threshold": 0.05, "penalty": 1.0}],
      "isolation": {"max_ms": 40}})";
  wt_engine* engine = nullptr;
  ASSERT_EQ(wt_engine_create(cfg_a.data(), cfg_a.size(), clock, &engine), WT_OK) << wt_last_error();
  wt_service* svc = nullptr;
  ASSERT_EQ(wt_engine_service(engine, "svc", &svc), WT_OK);

  const auto sets = MakeSets();
  auto set_of_epoch = [&](uint64_t e) -> const std::vector<std::pair<std::string, double>>& {
    return sets[(e - 1) % kSets];
  };
  std::atomic<uint64_t> published{0};  // the newest epoch whose set_endpoints call returned
  auto apply = [&](uint64_t epoch) {
    const auto& set = set_of_epoch(epoch);
    std::vector<wt_endpoint_spec> specs;
    for (auto& [id, w] : set) specs.push_back(Spec(id.c_str(), w));
    EXPECT_EQ(wt_service_set_endpoints(svc, specs.data(), specs.size(), nullptr, nullptr, nullptr), WT_OK) << wt_last_error();
    published.store(epoch);
  };
  apply(1);

  Counts c;
  std::atomic<int> pickers_left{kPickers};
  auto picker = [&](int t) {
    std::vector<wt_pick> held;  // picks finished later, so removals race with them
    for (int i = 0; i < kOpsPerThread; ++i) {
      const uint64_t before = published.load();
      wt_pick p = WT_PICK_INIT;
      const wt_status s = wt_service_pick(svc, &p);
      const uint64_t after = published.load();
      if (s == WT_ERR_NO_ENDPOINT) {
        ++c.no_endpoint;
        // Legal only if some set in force during the call was empty.
        bool empty_seen = false;
        for (uint64_t e = before; e <= after + 1; ++e) empty_seen |= set_of_epoch(e).empty();
        if (!empty_seen) c.Bad("WT_ERR_NO_ENDPOINT while every set in force was non-empty");
        // Wait for the next set instead of spending the operation budget on an empty one (the
        // churn thread goes on while any picker runs).
        while (published.load() == after) std::this_thread::yield();
        --i;
        continue;
      }
      if (s != WT_OK) { c.Bad(std::string("pick: ") + wt_status_name(s)); continue; }
      ++c.picks;
      // set_endpoints publishes before it returns and bumps `published`, hence after + 1.
      if (p.epoch < before || p.epoch > after + 1) {
        c.Bad("pick epoch " + std::to_string(p.epoch) + " outside [" + std::to_string(before) +
              ", " + std::to_string(after + 1) + "]");
        continue;
      }
      const auto& set = set_of_epoch(p.epoch);
      if (p.index >= set.size()) { c.Bad("pick index outside its set"); continue; }
      char id[64];
      size_t len = 0;
      const wt_status ids = wt_service_endpoint_id(svc, p.key, id, sizeof id, &len);
      if (ids == WT_OK && set[p.index].first != id) c.Bad("pick key and index disagree");
      if (ids != WT_OK && ids != WT_ERR_STALE) c.Bad("endpoint_id: unexpected status");
      const double latency = 1.0 + (i * 7 + t) % 50;
      const int outcome = i % 17 == 0 ? WT_OUTCOME_HTTP_5XX : i % 23 == 0 ? WT_OUTCOME_TIMEOUT : 0;
      switch (i % 8) {
        case 0: case 1: case 2:  // complete now
          c.Outcome(wt_service_complete(svc, &p, latency, outcome), "complete");
          break;
        case 3: {  // cancel: not an outcome; a stale cancel is not counted either
          const wt_status x = wt_service_cancel(svc, &p);
          if (x != WT_OK && x != WT_ERR_STALE) c.Bad("cancel");
          break;
        }
        case 4:  // report by key (a metrics pipeline), then finish the pick without an outcome
          c.Outcome(wt_service_report_key(svc, p.key, latency, outcome), "report_key");
          if (wt_service_cancel(svc, &p) > WT_ERR_STALE) c.Bad("cancel after report_key");
          break;
        case 5: {  // report by id: a removed id is WT_ERR_NOT_FOUND and counts nowhere
          const wt_status x = wt_service_report(svc, set[p.index].first.c_str(), latency, outcome);
          if (x == WT_ERR_NOT_FOUND) ++c.not_found;
          else c.Outcome(x, "report");
          wt_resources r{sizeof(wt_resources), WT_RES_CPU | WT_RES_CONNECTION_POOL, (i % 100) / 100.0, 0, 0, 0.5};
          const wt_status y = wt_service_report_resources(svc, set[p.index].first.c_str(), &r);
          if (y != WT_OK && y != WT_ERR_NOT_FOUND) c.Bad("report_resources");
          if (wt_service_cancel(svc, &p) > WT_ERR_STALE) c.Bad("cancel after report");
          break;
        }
        default:  // hold the pick and finish the held ones in a batch later
          held.push_back(p);
          break;
      }
      if (held.size() >= 8) {
        std::vector<wt_report> batch;
        for (const wt_pick& h : held) batch.push_back({sizeof(wt_report), outcome, h.key, latency, -1});
        size_t recorded = 0;
        wt_service_report_batch(svc, batch.data(), batch.size(), &recorded);
        size_t ok = 0;
        for (const wt_report& r : batch) {
          c.Outcome(static_cast<wt_status>(r.status), "report_batch");
          ok += r.status == WT_OK;
        }
        if (ok != recorded) c.Bad("report_batch: recorded disagrees with its entries");
        for (const wt_pick& h : held) {
          if (wt_service_cancel(svc, &h) > WT_ERR_STALE) c.Bad("cancel of a held pick");
        }
        held.clear();
      }
    }
    for (const wt_pick& h : held) c.Outcome(wt_service_complete(svc, &h, 3.0, 0), "complete");
    // One pick held across an empty set (every 13th): its endpoint was removed (a re-added id
    // gets a new key), so finishing it must be refused as stale and counted, on every run, not
    // only when the scheduler happens to interleave a removal with the batches above.
    wt_pick last = WT_PICK_INIT;
    if (wt_service_pick(svc, &last) == WT_OK) {
      ++c.picks;
      while (published.load() < last.epoch + 13) std::this_thread::yield();  // churn goes on
      const wt_status x = wt_service_complete(svc, &last, 3.0, 0);
      if (x != WT_ERR_STALE) c.Bad(std::string("held across an empty set: ") + wt_status_name(x));
      else ++c.stale;
    }
    --pickers_left;
  };

  std::thread churn([&] {
    // Bounded by the pickers' operation counts, with a hard cap in case they stall.
    for (uint64_t e = 2; pickers_left > 0 && e < 2000000; ++e) {
      apply(e);
      if (e % 3 == 0) {
        const std::string& cfg = e % 6 == 0 ? cfg_a : cfg_b;
        EXPECT_EQ(wt_engine_reload(engine, cfg.data(), cfg.size()), WT_OK) << wt_last_error();
      }
      if (clock == WT_CLOCK_MANUAL) {
        EXPECT_EQ(wt_engine_advance(engine, 7 * 1000000), WT_OK);  // a cycle every other step
      } else if (e % 5 == 0) {
        EXPECT_EQ(wt_engine_run_cycle(engine), WT_OK);
      }
      wt_event ev = WT_EVENT_INIT;
      int has = 0;
      EXPECT_EQ(wt_engine_poll_event(engine, &ev, &has), WT_OK);
    }
  });
  std::thread reader([&] {
    while (pickers_left > 0) {
      char* text = nullptr;
      if (wt_engine_snapshot_json(engine, &text, nullptr) != WT_OK) c.Bad("snapshot");
      else if (json::parse(text, nullptr, false).is_discarded()) c.Bad("snapshot is not JSON");
      wt_free(text);
      if (wt_engine_prometheus(engine, &text, nullptr) != WT_OK) c.Bad("prometheus");
      wt_free(text);
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kPickers; ++t) threads.emplace_back(picker, t);
  for (auto& t : threads) t.join();
  churn.join();
  reader.join();

  EXPECT_EQ(c.bad.load(), 0u) << ::testing::PrintToString(c.problems);
  EXPECT_GT(c.picks.load(), uint64_t{kPickers} * kOpsPerThread / 2);
  EXPECT_GT(published.load(), 10u) << "the set changed under the pickers";
  EXPECT_GT(c.stale.load(), 0u) << "reports raced with removals (the case under test)";

  char* text = nullptr;
  ASSERT_EQ(wt_engine_snapshot_json(engine, &text, nullptr), WT_OK);
  const json snap = json::parse(text);
  wt_free(text);
  const json& s = snap["services"][0];
  uint64_t counted = 0;
  for (auto& [k, v] : s["removed_totals"].items()) counted += v.get<uint64_t>();
  for (const json& ep : s["endpoints"]) {
    for (auto& [k, v] : ep["totals"].items()) counted += v.get<uint64_t>();
    EXPECT_EQ(ep["inflight"], 0) << ep["id"] << ": every tracked pick was finished once";
  }
  EXPECT_EQ(counted, c.recorded.load()) << "each accepted outcome is in the totals exactly once";
  EXPECT_EQ(s["stale_reports"].get<uint64_t>(), c.stale.load());
  EXPECT_EQ(s["epoch"].get<uint64_t>(), published.load());
  wt_engine_destroy(engine);
}

INSTANTIATE_TEST_SUITE_P(Clocks, Stress, ::testing::Values(WT_CLOCK_MANUAL, WT_CLOCK_REAL),
                         [](const auto& info) {
                           return std::string(info.param == WT_CLOCK_MANUAL ? "Manual" : "Real");
                         });

}  // namespace
}  // namespace weighted::testing
