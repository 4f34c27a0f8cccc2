// The C API's contract: status codes and messages for bad input with state unchanged, reload,
// events by poll and callback, exports, files, the real clock.
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <limits>
#include <mutex>

#include <gmock/gmock.h>

#include "harness.h"

namespace weighted::testing {
namespace {

using ::testing::HasSubstr;

// Runs a failing call and checks its status, its message, and that nothing changed.
#define EXPECT_REJECTED(h, call, status, text)                       \
  do {                                                               \
    const json before = (h).Snapshot();                              \
    EXPECT_EQ((call), (status)) << wt_last_error();                  \
    EXPECT_THAT(std::string(wt_last_error()), HasSubstr(text));      \
    json after = (h).Snapshot();                                     \
    EXPECT_EQ(before, after) << "state changed by a rejected call";  \
  } while (0)

class Api : public ::testing::Test {
 protected:
  void SetUp() override {
    h.Set({{"a", 1}, {"b", 1}});
    h.Drive(5, 50, [](const std::string&) { return Ok(); });
    ASSERT_EQ(wt_service_pick(h.svc(), &pick), WT_OK);
  }
  Harness h;
  wt_pick pick = WT_PICK_INIT;
};

TEST_F(Api, BadOutcomesAreRejectedWithTheirReason) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_REJECTED(h, wt_service_complete(h.svc(), &pick, nan, 0), WT_ERR_INVALID_ARGUMENT, "got nan");
  EXPECT_REJECTED(h, wt_service_complete(h.svc(), &pick, -1, 0), WT_ERR_INVALID_ARGUMENT, "got -1");
  EXPECT_REJECTED(h, wt_service_complete(h.svc(), &pick, INFINITY, 0), WT_ERR_INVALID_ARGUMENT, "got inf");
  EXPECT_REJECTED(h, wt_service_complete(h.svc(), &pick, 1e12, 0), WT_ERR_INVALID_ARGUMENT,
                  "limits.max_latency_ms");
  EXPECT_REJECTED(h, wt_service_complete(h.svc(), &pick, 1, 7), WT_ERR_INVALID_ARGUMENT, "got 7");
  EXPECT_REJECTED(h, wt_service_report(h.svc(), "nope", 1, 0), WT_ERR_NOT_FOUND, "\"nope\"");
  wt_resources r{sizeof(wt_resources), WT_RES_CPU, 1.5, 0, 0, 0};
  EXPECT_REJECTED(h, wt_service_report_resources(h.svc(), "a", &r), WT_ERR_INVALID_ARGUMENT, "cpu");
  r = {sizeof(wt_resources), 1u << 9, 0, 0, 0, 0};
  EXPECT_REJECTED(h, wt_service_report_resources(h.svc(), "a", &r), WT_ERR_INVALID_ARGUMENT, "unknown bits");
}

TEST_F(Api, NullPointersAreNamed) {
  EXPECT_REJECTED(h, wt_service_pick(h.svc(), nullptr), WT_ERR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_REJECTED(h, wt_service_pick(nullptr, &pick), WT_ERR_INVALID_ARGUMENT, "service is NULL");
  EXPECT_REJECTED(h, wt_service_complete(h.svc(), nullptr, 1, 0), WT_ERR_INVALID_ARGUMENT, "pick is NULL");
  EXPECT_REJECTED(h, wt_service_report(h.svc(), nullptr, 1, 0), WT_ERR_INVALID_ARGUMENT, "endpoint_id is NULL");
  EXPECT_REJECTED(h, wt_engine_service(h.engine(), nullptr, nullptr), WT_ERR_INVALID_ARGUMENT, "name is NULL");
  EXPECT_REJECTED(h, wt_engine_reload(h.engine(), nullptr, 0), WT_ERR_INVALID_ARGUMENT, "json is NULL");
  EXPECT_EQ(wt_engine_create(nullptr, 0, 0, nullptr), WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wt_engine_now(nullptr, nullptr), WT_ERR_INVALID_ARGUMENT);
  wt_engine_destroy(nullptr);  // accepted
  wt_free(nullptr);
}

TEST_F(Api, BadEndpointSetsAreRejectedAndTheOldSetStays) {
  wt_endpoint_spec dup[] = {Spec("x", 1), Spec("x", 2)};
  EXPECT_REJECTED(h, wt_service_set_endpoints(h.svc(), dup, 2, nullptr, nullptr, nullptr), WT_ERR_DUPLICATE, "\"x\" appears twice");
  wt_endpoint_spec bad_w[] = {Spec("x", 0)};
  EXPECT_REJECTED(h, wt_service_set_endpoints(h.svc(), bad_w, 1, nullptr, nullptr, nullptr), WT_ERR_INVALID_ARGUMENT, "base_weight");
  wt_endpoint_spec nan_w[] = {Spec("x", NAN)};
  EXPECT_REJECTED(h, wt_service_set_endpoints(h.svc(), nan_w, 1, nullptr, nullptr, nullptr), WT_ERR_INVALID_ARGUMENT, "got nan");
  wt_endpoint_spec no_id[] = {Spec(nullptr, 1)};
  EXPECT_REJECTED(h, wt_service_set_endpoints(h.svc(), no_id, 1, nullptr, nullptr, nullptr), WT_ERR_INVALID_ARGUMENT, "specs[0].id is NULL");
  wt_endpoint_spec empty_id[] = {Spec("", 1)};
  EXPECT_REJECTED(h, wt_service_set_endpoints(h.svc(), empty_id, 1, nullptr, nullptr, nullptr), WT_ERR_INVALID_ARGUMENT, "1..256 bytes");
}

TEST_F(Api, LimitsAreEnforced) {
  Harness small(R"({"limits": {"max_services": 2, "max_endpoints_per_service": 3}})");
  wt_service* s;
  ASSERT_EQ(wt_engine_service(small.engine(), "second", &s), WT_OK);
  EXPECT_EQ(wt_engine_service(small.engine(), "third", &s), WT_ERR_LIMIT);
  EXPECT_THAT(wt_last_error(), HasSubstr("limits.max_services = 2"));
  wt_endpoint_spec four[] = {Spec("a", 1), Spec("b", 1), Spec("c", 1), Spec("d", 1)};
  EXPECT_EQ(wt_service_set_endpoints(s, four, 4, nullptr, nullptr, nullptr), WT_ERR_LIMIT);
  EXPECT_THAT(wt_last_error(), HasSubstr("max_endpoints_per_service = 3"));
}

TEST_F(Api, EmptySetMeansNoEndpoint) {
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), nullptr, 0, nullptr, nullptr, nullptr), WT_OK);
  EXPECT_EQ(wt_service_pick(h.svc(), &pick), WT_ERR_NO_ENDPOINT);
  EXPECT_THAT(wt_last_error(), HasSubstr("\"svc\" has no endpoints"));
  EXPECT_EQ(wt_service_complete(h.svc(), &pick, 1, 0), WT_ERR_STALE);
}

// Both services have an endpoint in slot 0; a key from one must not land on the other's.
TEST_F(Api, AKeyFromAnotherServiceIsStale) {
  wt_service* other;
  ASSERT_EQ(wt_engine_service(h.engine(), "other", &other), WT_OK);
  wt_endpoint_spec same[] = {Spec("a", 1), Spec("b", 1)};
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), same, 2, nullptr, nullptr, nullptr), WT_OK);
  ASSERT_EQ(wt_service_set_endpoints(other, same, 2, nullptr, nullptr, nullptr), WT_OK);
  ASSERT_EQ(wt_service_pick(h.svc(), &pick), WT_OK);
  EXPECT_EQ(wt_service_complete(other, &pick, 1, WT_OUTCOME_SUCCESS), WT_ERR_STALE);
  EXPECT_EQ(wt_service_report_key(other, pick.key, 1, WT_OUTCOME_SUCCESS), WT_ERR_STALE);
  EXPECT_EQ(wt_service_complete(h.svc(), &pick, 1, WT_OUTCOME_SUCCESS), WT_OK);
}

// Two writers on one service: each learns the epoch of the set it installed, and picks carry it.
TEST_F(Api, SetEndpointsEpochNamesTheSetItInstalled) {
  wt_endpoint_spec mine[] = {Spec("a", 1), Spec("b", 1)};
  wt_endpoint_spec theirs[] = {Spec("b", 1), Spec("c", 1), Spec("d", 1)};
  uint64_t e1 = 0, e2 = 0, e3 = 0;
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), mine, 2, nullptr, nullptr, &e1), WT_OK);
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), theirs, 3, nullptr, nullptr, nullptr), WT_OK);  // another writer
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), theirs, 3, nullptr, nullptr, &e2), WT_OK);
  EXPECT_EQ(e2, e1 + 2);
  ASSERT_EQ(wt_service_pick(h.svc(), &pick), WT_OK);
  EXPECT_EQ(pick.epoch, e2);
  ASSERT_EQ(wt_service_cancel(h.svc(), &pick), WT_OK);
  wt_endpoint_spec dup[] = {Spec("a", 1), Spec("a", 1)};
  e3 = 777;
  EXPECT_EQ(wt_service_set_endpoints(h.svc(), dup, 2, nullptr, nullptr, &e3), WT_ERR_DUPLICATE);
  EXPECT_EQ(e3, 777u) << "out-parameters are written only on success";
}

TEST_F(Api, InvalidReloadKeepsTheOldConfig) {
  const std::string article = R"({"profile": "article"})";
  EXPECT_REJECTED(h, wt_engine_reload(h.engine(), "{\"controller\": {\"max_step\": 2}}", 31),
                  WT_ERR_CONFIG_INVALID, "/controller/max_step");
  EXPECT_REJECTED(h, wt_engine_reload(h.engine(), "{\"profile\": ", 12), WT_ERR_CONFIG_PARSE, "line 1");
  ASSERT_EQ(wt_engine_reload(h.engine(), article.data(), article.size()), WT_OK);
  EXPECT_EQ(h.Snapshot()["profile"], "article");
  EXPECT_EQ(h.Count(WT_EVENT_CONFIG_RELOADED), 1);
  EXPECT_GT(h.Endpoint("a")["window"]["requests"].get<int>(), 0) << "state survives a reload";
}

TEST_F(Api, ClockModesAreChecked) {
  EXPECT_REJECTED(h, wt_engine_advance(h.engine(), -5), WT_ERR_INVALID_ARGUMENT, "backwards");
  wt_engine* real;
  ASSERT_EQ(wt_engine_create("{}", 2, WT_CLOCK_REAL, &real), WT_OK);
  EXPECT_EQ(wt_engine_advance(real, 1), WT_ERR_WRONG_CLOCK);
  wt_engine_destroy(real);
  EXPECT_EQ(wt_engine_create("{}", 2, 7, &real), WT_ERR_INVALID_ARGUMENT);
}

TEST_F(Api, EventsArriveByPollInTheSameOrderAsByCallback) {
  Harness e(R"({"picker": {"mode": "weighted"},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}]})");
  e.Set({{"a", 1}, {"b", 1}});
  e.Drive(5, 100, [](const std::string& id) {
    return id == "a" ? Outcome{5, WT_OUTCOME_HTTP_5XX} : Ok();
  });
  std::vector<std::pair<int, std::string>> polled;
  for (;;) {
    wt_event ev = WT_EVENT_INIT;
    int has = 0;
    ASSERT_EQ(wt_engine_poll_event(e.engine(), &ev, &has), WT_OK);
    if (!has) break;
    EXPECT_STREQ(ev.service, "svc");
    polled.emplace_back(ev.type, ev.endpoint);
  }
  ASSERT_EQ(polled.size(), e.events().size());
  for (size_t i = 0; i < polled.size(); ++i) EXPECT_EQ(polled[i].first, e.events()[i].type);
  EXPECT_EQ(polled.back(), (std::pair<int, std::string>{WT_EVENT_ISOLATED, "a"}));
}

TEST_F(Api, SnapshotAndPrometheusShowPerRuleContributions) {
  Harness e;
  e.Set({{"a", 1}, {"b", 1}});
  e.Drive(5, 100, [](const std::string& id) {
    return id == "a" ? Outcome{5, WT_OUTCOME_TIMEOUT} : Ok();
  });
  json a = e.Endpoint("a");
  EXPECT_EQ(a["rules"][1]["metric"], "error_rate");
  // Graded: every request timed out, so the error rule weighs its full penalty.
  EXPECT_DOUBLE_EQ(a["rules"][1]["contribution"].get<double>(), 1.0);
  const int timeouts = a["window"]["errors"]["timeout"];
  EXPECT_EQ(timeouts, a["window"]["requests"].get<int>());
  EXPECT_FALSE(e.Endpoint("b")["rules"][0]["fired"].get<bool>())
      << "a failing endpoint does not make its healthy peer look slow";
  char* text;
  ASSERT_EQ(wt_engine_prometheus(e.engine(), &text, nullptr), WT_OK);
  const std::string prom(text);
  wt_free(text);
  EXPECT_THAT(prom, HasSubstr("# TYPE weighted_endpoint_weight gauge"));
  EXPECT_THAT(prom, HasSubstr(
      "weighted_endpoint_rule_contribution{service=\"svc\",endpoint=\"a\",rule=\"error_rate\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr(
      "weighted_endpoint_outcomes_total{service=\"svc\",endpoint=\"a\",outcome=\"timeout\"} " +
      a["totals"]["timeout"].dump()));
}

TEST_F(Api, EndpointIdsAndKeysRoundTrip) {
  uint64_t key;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "b", &key), WT_OK);
  char buf[8];
  size_t len = 0;
  ASSERT_EQ(wt_service_endpoint_id(h.svc(), key, buf, sizeof buf, &len), WT_OK);
  EXPECT_STREQ(buf, "b");
  EXPECT_EQ(wt_service_endpoint_id(h.svc(), key, buf, 1, &len), WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(len, 1u);
}

TEST_F(Api, BatchReportsRecordValidEntriesAndFlagBadOnes) {
  uint64_t ka;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &ka), WT_OK);
  wt_report batch[3] = {{sizeof(wt_report), WT_OUTCOME_SUCCESS, ka, 5, -1},
                        {sizeof(wt_report), 0, ka, NAN, -1},
                        {sizeof(wt_report), 0, 12345, 5, -1}};
  size_t recorded = 0;
  EXPECT_EQ(wt_service_report_batch(h.svc(), batch, 3, &recorded), WT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(wt_last_error(), HasSubstr("entry 1"));
  EXPECT_EQ(recorded, 1u);
  EXPECT_EQ(batch[0].status, WT_OK);
  EXPECT_EQ(batch[1].status, WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(batch[2].status, WT_ERR_STALE);
}

TEST_F(Api, CreateFromFileAndReadErrors) {
  const std::string path = ::testing::TempDir() + "/wt_cfg.json";
  std::ofstream(path) << R"({"profile": "article"})";
  wt_engine* e;
  ASSERT_EQ(wt_engine_create_from_file(path.c_str(), WT_CLOCK_MANUAL, &e), WT_OK) << wt_last_error();
  wt_engine_destroy(e);
  EXPECT_EQ(wt_engine_create_from_file("/nonexistent/cfg.json", WT_CLOCK_MANUAL, &e), WT_ERR_IO);
  EXPECT_THAT(wt_last_error(), HasSubstr("/nonexistent/cfg.json"));
  EXPECT_EQ(wt_config_validate("[1,", 3), WT_ERR_CONFIG_PARSE);
  EXPECT_EQ(std::string(wt_status_name(WT_ERR_STALE)), "WT_ERR_STALE");
  EXPECT_EQ(wt_outcome_from_http_status(503), WT_OUTCOME_HTTP_5XX);
  EXPECT_EQ(wt_outcome_from_http_status(404), WT_OUTCOME_SUCCESS);
}

TEST_F(Api, LastErrorIsClearedBySuccessAndIsPerThread) {
  EXPECT_EQ(wt_service_pick(h.svc(), nullptr), WT_ERR_INVALID_ARGUMENT);
  std::string other;
  std::thread([&] { other = wt_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(wt_last_error()), "");
  ASSERT_EQ(wt_service_pick(h.svc(), &pick), WT_OK);
  EXPECT_EQ(std::string(wt_last_error()), "");
}

TEST_F(Api, CallbacksMayCallBackIntoTheEngine) {
  // Events are delivered after the engine released its locks: a callback that picks, reports
  // and even runs a cycle must not deadlock.
  struct Ctx {
    wt_engine* e;
    wt_service* s;
    int reentered = 0;
  } ctx{h.engine(), h.svc()};
  ASSERT_EQ(wt_engine_set_event_callback(h.engine(), [](void* u, const wt_event* ev) {
    auto* c = static_cast<Ctx*>(u);
    if (ev->type != WT_EVENT_ENDPOINT_ADDED || c->reentered++) return;
    wt_pick p = WT_PICK_INIT;
    EXPECT_EQ(wt_service_pick(c->s, &p), WT_OK);
    EXPECT_EQ(wt_service_complete(c->s, &p, 1, WT_OUTCOME_SUCCESS), WT_OK);
    EXPECT_EQ(wt_engine_run_cycle(c->e), WT_OK);
    EXPECT_EQ(wt_engine_advance(c->e, 1000), WT_OK);
  }, &ctx, nullptr), WT_OK);
  wt_endpoint_spec specs[] = {Spec("a", 1), Spec("b", 1), Spec("c", 1)};
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), specs, 3, nullptr, nullptr, nullptr), WT_OK);
  EXPECT_EQ(ctx.reentered, 1);
  wt_engine_set_event_callback(h.engine(), nullptr, nullptr, nullptr);
}

TEST(RealClock, TheControllerThreadRunsCyclesOnItsOwn) {
  const std::string cfg = R"({"controller": {"interval_ms": 20, "cooldown_ms": 20},
      "window": {"length_ms": 20, "min_requests": 1},
      "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}]})";
  wt_engine* e;
  ASSERT_EQ(wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_REAL, &e), WT_OK) << wt_last_error();
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool isolated = false;
  } w;
  wt_engine_set_event_callback(e, [](void* u, const wt_event* ev) {
    auto* w = static_cast<Waiter*>(u);
    std::lock_guard lock(w->mu);
    if (ev->type == WT_EVENT_ISOLATED) w->isolated = true;
    w->cv.notify_all();
  }, &w, nullptr);
  wt_service* s;
  ASSERT_EQ(wt_engine_service(e, "svc", &s), WT_OK);
  wt_endpoint_spec specs[] = {Spec("a", 1), Spec("b", 1)};
  ASSERT_EQ(wt_service_set_endpoints(s, specs, 2, nullptr, nullptr, nullptr), WT_OK);
  // Keep reporting errors until the controller, on its own thread, isolates "a" (bounded).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::unique_lock lock(w.mu);
  while (!w.isolated && std::chrono::steady_clock::now() < deadline) {
    lock.unlock();
    ASSERT_EQ(wt_service_report(s, "a", 1, WT_OUTCOME_HTTP_5XX), WT_OK);
    lock.lock();
    w.cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(w.isolated);
  lock.unlock();
  wt_engine_set_event_callback(e, nullptr, nullptr, nullptr);
  wt_engine_destroy(e);
}

}  // namespace
}  // namespace weighted::testing
