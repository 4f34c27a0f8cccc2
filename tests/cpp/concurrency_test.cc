// Picks and reports from several threads while another thread churns the endpoint set and
// reloads the config: every outcome is accounted for exactly once, and every pick names an
// endpoint of the set in force. Bounded by operation counts, not by time.
#include <atomic>
#include <thread>

#include "harness.h"

namespace weighted::testing {
namespace {

TEST(Concurrency, ChurnAndReloadLoseNoReportAndPickOnlyLiveEndpoints) {
  Harness h(R"({"seed": 1, "picker": {"mode": "load_aware"}})");
  // Set k (epoch k + 1) is a sliding subset of 8 ids, so endpoints come, stay and go.
  std::vector<std::vector<std::string>> sets;
  for (int k = 0; k < 200; ++k) {
    std::vector<std::string> ids;
    for (int j = 0; j < 4; ++j) ids.push_back("ep" + std::to_string((k + j) % 8));
    sets.push_back(ids);
  }
  auto apply = [&](int k) {
    std::vector<wt_endpoint_spec> specs;
    for (auto& id : sets[k]) specs.push_back(Spec(id.c_str(), 1.0 + k % 3));
    ASSERT_EQ(wt_service_set_endpoints(h.svc(), specs.data(), specs.size(), nullptr, nullptr, nullptr), WT_OK);
  };
  apply(0);

  std::atomic<int> pickers_left{2};
  std::atomic<uint64_t> attempts{0}, recorded{0}, stale{0}, bad_picks{0}, max_epoch{0};
  auto picker = [&] {
    // At least 30000 operations, and until picks have met a set installed while they ran: on a
    // loaded machine the churn thread may not have started before 30000 picks are done.
    for (int i = 0; i < 30000 || max_epoch.load() < 3; ++i) {
      ++attempts;
      wt_pick p = WT_PICK_INIT;
      if (wt_service_pick(h.svc(), &p) != WT_OK) { ++bad_picks; continue; }
      uint64_t seen = max_epoch.load();
      while (p.epoch > seen && !max_epoch.compare_exchange_weak(seen, p.epoch)) {}
      const auto& set = sets.at((p.epoch - 1) % sets.size());
      char id[32];
      size_t len;
      if (p.index >= set.size()) ++bad_picks;
      else if (wt_service_endpoint_id(h.svc(), p.key, id, sizeof id, &len) == WT_OK && set[p.index] != id) ++bad_picks;
      wt_status s = wt_service_complete(h.svc(), &p, 1.0 + i % 7, i % 11 == 0 ? WT_OUTCOME_HTTP_5XX : 0);
      if (s == WT_OK) ++recorded;
      else if (s == WT_ERR_STALE) ++stale;
      else ++bad_picks;
    }
    --pickers_left;
  };
  std::thread churn([&] {
    const std::string a = R"({"seed": 1, "picker": {"mode": "load_aware"}})";
    const std::string b = R"({"seed": 1, "profile": "article"})";
    // Churns for as long as the pickers run (bounded by their operation counts).
    for (int k = 1; pickers_left > 0; ++k) {
      apply(k % 200);
      const std::string& c = k % 2 ? b : a;
      EXPECT_EQ(wt_engine_reload(h.engine(), c.data(), c.size()), WT_OK);
      EXPECT_EQ(wt_engine_run_cycle(h.engine()), WT_OK);
    }
  });
  std::thread p1(picker), p2(picker);
  p1.join();
  p2.join();
  churn.join();

  EXPECT_EQ(bad_picks, 0u);
  EXPECT_EQ(recorded + stale, attempts.load());
  EXPECT_GT(max_epoch.load(), 2u) << "picks saw the set change under them";
  const json snap = h.Snapshot();
  const json& svc = snap["services"][0];
  uint64_t counted = 0;
  for (auto& [k, v] : svc["removed_totals"].items()) counted += v.get<uint64_t>();
  for (auto& ep : svc["endpoints"]) {
    for (auto& [k, v] : ep["totals"].items()) counted += v.get<uint64_t>();
    EXPECT_EQ(ep["inflight"], 0) << "every tracked pick was finished once";
  }
  EXPECT_EQ(counted, recorded.load()) << "each recorded outcome is in the totals once";
  EXPECT_EQ(svc["stale_reports"].get<uint64_t>(), stale.load());
}

}  // namespace
}  // namespace weighted::testing
