// The capacity guard and the isolation cap: a cut or an isolation moves only the traffic the
// endpoints that keep theirs can absorb, and no more than max_share of the base weight is
// isolated at once.
#include <string>

#include "harness.h"

namespace weighted::testing {
namespace {

// Weighted picks (what the controller decides is what the traffic shows) and one rule that
// isolates an endpoint whose mean latency passes 50 ms.
std::string Config(const std::string& extra = "") {
  return R"({"seed": 5, "picker": {"mode": "weighted"}, )" + extra +
         R"("rules": [{"metric": "latency_mean", "threshold_ms": 50, "penalty": 1.0},
                      {"metric": "error_rate", "threshold": 0.5, "penalty": 1.0}]})";
}

Outcome SlowA(const std::string& id) { return id == "A" ? Ok(200) : Ok(20); }

json Guard(Harness& h) { return h.Snapshot()["services"][0]["guard"]; }

TEST(Guard, AnIsolationThePeersCannotAbsorbIsHeldAndSaidSo) {
  Harness h(Config());
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  h.Drive(12, 300, SlowA, [](const std::string&) { return 0.97; });  // every peer saturated
  const json a = h.Endpoint("A");
  EXPECT_NE(a["state"], "isolated");
  EXPECT_DOUBLE_EQ(a["weight"].get<double>(), 1.0) << "no room at all: the cut moves nothing";
  const json g = Guard(h);
  EXPECT_TRUE(g["enabled"].get<bool>());
  EXPECT_TRUE(g["headroom_known"].get<bool>());
  EXPECT_EQ(g["held"], 1);
  EXPECT_DOUBLE_EQ(g["headroom_rps"].get<double>(), 0.0);
  EXPECT_GT(g["moved_rps"].get<double>(), 50.0) << "A's ~100 successes/s would have moved";
  ASSERT_EQ(h.Count(WT_EVENT_GUARD), 1) << "raised when the number held changes, not per cycle";
  for (const auto& e : h.events()) {
    if (e.type != WT_EVENT_GUARD) continue;
    const json r = json::parse(e.reason);
    EXPECT_EQ(r["held"], 1);
    EXPECT_EQ(r["endpoints"], json::array({"A"}));
    EXPECT_DOUBLE_EQ(r["max_utilization"].get<double>(), 0.9);
  }
  EXPECT_EQ(h.Count(WT_EVENT_ISOLATED), 0);
}

TEST(Guard, WithRoomThePeersTakeTheLoadAndTheEndpointIsIsolated) {
  Harness h(Config());
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  h.Drive(12, 300, SlowA, [](const std::string&) { return 0.3; });
  EXPECT_EQ(h.Endpoint("A")["state"], "isolated");
  EXPECT_EQ(Guard(h)["held"], 0);
  EXPECT_EQ(h.Count(WT_EVENT_GUARD), 0);
}

TEST(Guard, PartOfACutGoesThroughWhenThePeersHaveSomeRoom) {
  // A is cut from 1 to 0.5: its share of the weights falls from 1/3 to 1/5 and it would move
  // ~40 of its ~100 successes/s. B and C at 85% CPU have 100 x (0.9 / 0.85 - 1) ~ 5.9 each, so
  // about 12/40 of the cut goes through: A's weight stops near 1 - 0.3 x 0.5.
  Harness h(R"({"seed": 5, "picker": {"mode": "weighted"}, "rules": [
      {"metric": "latency_mean", "threshold_ms": 50, "penalty": 0.5}]})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  h.Drive(6, 300, SlowA, [](const std::string& id) { return id == "A" ? 0.5 : 0.85; });
  const double w = h.Endpoint("A")["weight"].get<double>();
  EXPECT_GT(w, 0.78);
  EXPECT_LT(w, 0.93);
  EXPECT_EQ(Guard(h)["held"], 1);
}

TEST(Guard, APeerIdleInTheLastCycleIsCreditedWithTheFleetsCapacity) {
  // A is slow and served the last cycle's traffic; B served nothing in it (a client between
  // bursts), at 30% CPU. B's own rate says nothing of its room, so it is credited with the
  // capacity per endpoint that A's rate over its utilisation shows, and A is isolated.
  Harness h(Config());
  h.Set({{"A", 1}, {"B", 1}});
  for (int s = 0; s < 2; ++s) {  // B's history: it served before
    for (int i = 0; i < 50; ++i) ASSERT_EQ(wt_service_report(h.svc(), "B", 20, WT_OUTCOME_SUCCESS), WT_OK);
    ASSERT_EQ(wt_engine_advance(h.engine(), 2'000'000'000), WT_OK);
  }
  for (int i = 0; i < 5; ++i) {
    for (const char* id : {"A", "B"}) {
      wt_resources r{sizeof(wt_resources), WT_RES_CPU, 0.3, 0, 0, 0};
      ASSERT_EQ(wt_service_report_resources(h.svc(), id, &r), WT_OK);
    }
    for (int k = 0; k < 100; ++k) {
      ASSERT_EQ(wt_service_report(h.svc(), "A", 200, WT_OUTCOME_SUCCESS), WT_OK);
    }
    ASSERT_EQ(wt_engine_advance(h.engine(), 1'000'000'000), WT_OK);
  }
  EXPECT_EQ(h.Endpoint("A")["state"], "isolated");
  EXPECT_EQ(Guard(h)["held"], 0);
  EXPECT_GT(Guard(h)["headroom_rps"].get<double>(), 0.0);
}

TEST(Guard, PeersAtTheirUsualLatencyWithoutCpuHaveRoomForASlowEndpointsCut) {
  // A client-side engine with no resource reports: B and C answer as fast as they always did
  // (utilisation ~0 by their latency), A slows 100x. The cut goes through whole: a nearly idle
  // peer is not read as having only the slow endpoint's capacity.
  Harness h(R"({"seed": 5, "picker": {"mode": "weighted"}, "rules": [
      {"metric": "latency_mean", "relative": 1.5, "threshold_ms": 120, "penalty": 0.8}]})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  h.Drive(10, 60, [](const std::string&) { return Ok(2); });
  h.Drive(6, 60, [](const std::string& id) { return id == "A" ? Ok(250) : Ok(2); });
  EXPECT_NEAR(h.Endpoint("A")["weight"].get<double>(), 0.2, 1e-9);
  EXPECT_EQ(Guard(h)["held"], 0);
}

TEST(Guard, AHardDownEndpointMovesNoSuccessesAndIsNeverHeld) {
  Harness h(Config());
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  h.Drive(12, 300,
          [](const std::string& id) {
            return id == "A" ? Outcome{1, WT_OUTCOME_CONNECT_ERROR} : Ok(20);
          },
          [](const std::string&) { return 0.97; });
  EXPECT_EQ(h.Endpoint("A")["state"], "isolated");
  EXPECT_EQ(Guard(h)["held"], 0);
}

TEST(Guard, TurnedOffAndInTheArticleProfileTheEndpointIsIsolatedWhateverThePeers) {
  for (const std::string extra : {std::string(R"("guard": {"enabled": false}, )"),
                                  std::string(R"("profile": "article", )")}) {
    Harness h(Config(extra));
    h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
    h.Drive(12, 300, SlowA, [](const std::string&) { return 0.97; });
    EXPECT_EQ(h.Endpoint("A")["state"], "isolated") << extra;
    EXPECT_FALSE(Guard(h)["enabled"].get<bool>()) << extra;
  }
}

TEST(Guard, WithoutAnyUtilisationTheLatencysInflationOverItsOwnNormalIsRead) {
  // No CPU reports. B and C answer in 20 ms, then in 400 ms (a queue has built) while A turns
  // twice as slow again: their latency's inflation over their own normal, 1 - 20/210 in the
  // first cycle after (the window mixes both) and 1 - 20/400 later, reads as no room.
  Harness h(R"({"seed": 5, "picker": {"mode": "weighted"}, "rules": [
      {"metric": "latency_mean", "relative": 1.5, "penalty": 1.0}]})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  h.Drive(10, 300, [](const std::string&) { return Ok(20); });
  h.Drive(12, 300, [](const std::string& id) { return id == "A" ? Ok(800) : Ok(400); });
  EXPECT_NE(h.Endpoint("A")["state"], "isolated");
  EXPECT_EQ(Guard(h)["held"], 1);
  EXPECT_TRUE(Guard(h)["headroom_known"].get<bool>());
}

TEST(Guard, TheCapKeepsAllButOneOfTheSickInRotationAtATenthOfTheirWeight) {
  Harness h(Config(R"("isolation": {"max_share": 0.3}, )"));
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}, {"D", 1}});
  h.Drive(12, 400, [](const std::string& id) { return id == "A" || id == "B" ? Ok(200) : Ok(20); },
          [](const std::string&) { return 0.2; });
  int isolated = 0;
  for (const char* id : {"A", "B"}) {
    const json e = h.Endpoint(id);
    if (e["state"] == "isolated") {
      ++isolated;
    } else {
      EXPECT_NEAR(e["weight"].get<double>(), 0.1, 1e-9) << id;
    }
  }
  EXPECT_EQ(isolated, 1) << "one endpoint always may be isolated; a second passes 30%";
  EXPECT_EQ(Guard(h)["held"], 1);
  EXPECT_EQ(h.Endpoint("C")["state"], "healthy");
}

}  // namespace
}  // namespace weighted::testing
