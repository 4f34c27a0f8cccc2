// The Prometheus source's parts that need no Prometheus: its answer parser, its freshness rules
// on made-up times, and the promise that a server which accepts a connection and never answers
// blocks neither a pick, nor a cycle, nor the engine's shutdown. The run against a real
// Prometheus server scraping real backends is tests/python/test_prometheus_source.py.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"
#include "runtime/prometheus_source.h"

namespace weighted {
namespace {

using testing::json;
using Series = std::vector<std::pair<std::string, double>>;

std::string Vector(const std::string& result) {
  return R"({"status":"success","data":{"resultType":"vector","result":[)" + result + "]}}";
}

TEST(PrometheusAnswer, AVectorGivesEachLabelledSeries) {
  Series out;
  std::string skipped;
  const std::string body = Vector(
      R"({"metric":{"instance":"10.0.0.1:8080","job":"api"},"value":[1700000000.1,"0.25"]},)"
      R"({"metric":{"job":"api"},"value":[1700000000.1,"0.5"]},)"
      R"({"metric":{"instance":"10.0.0.2:8080"},"value":[1700000000.1,"1"]})");
  ASSERT_EQ(ParseVector(body, "instance", false, &out, &skipped), "");
  ASSERT_EQ(out.size(), 2u);  // the series without the label is nobody's
  EXPECT_EQ(out[0].first, "10.0.0.1:8080");
  EXPECT_DOUBLE_EQ(out[0].second, 0.25);
  EXPECT_DOUBLE_EQ(out[1].second, 1.0);
  EXPECT_EQ(skipped, "");
}

TEST(PrometheusAnswer, ValuesThatAreNoFractionAreSkippedAndNamed) {
  Series out;
  std::string skipped;
  const std::string body = Vector(
      R"({"metric":{"instance":"a"},"value":[1,"NaN"]},)"
      R"({"metric":{"instance":"b"},"value":[1,"+Inf"]},)"
      R"({"metric":{"instance":"c"},"value":[1,"1.5"]},)"
      R"({"metric":{"instance":"d"},"value":[1,"0.5"]})");
  ASSERT_EQ(ParseVector(body, "instance", false, &out, &skipped), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, "d");
  EXPECT_EQ(skipped, R"("a" = "NaN" is not a fraction in [0, 1])");
  // CPU over 1 (a process past its quota) counts as a full CPU instead.
  out.clear();
  skipped.clear();
  ASSERT_EQ(ParseVector(body, "instance", true, &out, &skipped), "");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, "c");
  EXPECT_DOUBLE_EQ(out[0].second, 1.0);
}

TEST(PrometheusAnswer, NonsenseIsAnErrorThatSaysWhat) {
  Series out;
  std::string skipped;
  auto error = [&](const std::string& body) {
    return ParseVector(body, "instance", false, &out, &skipped);
  };
  EXPECT_EQ(error("<html>502 Bad Gateway</html>"), "the answer is not a JSON object");
  EXPECT_EQ(error(R"({"data":{}})"), "the answer has no \"status\"");
  EXPECT_EQ(error(R"({"status":"error","errorType":"bad_data","error":"parse error at char 4"})"),
            "Prometheus says bad_data: parse error at char 4");
  EXPECT_EQ(error(R"({"status":"success","data":{"resultType":"matrix","result":[]}})"),
            "the query gives a matrix, not an instant vector");
  EXPECT_EQ(error(R"({"status":"success","data":{"resultType":"vector","result":{}}})"),
            "data.result is not an array");
  EXPECT_EQ(error(Vector(R"({"metric":{"instance":"a"},"value":[1,0.5]})")),
            "a series lacks \"metric\" or a [time, \"value\"] pair");
  EXPECT_TRUE(out.empty());
}

constexpr int64_t kMs = 1000000;

TEST(SourceHealthRules, StaleAfterStaleMsWithoutSuccessThenFreshOnce) {
  SourceHealth h(0);
  const int64_t stale = 300 * kMs;
  EXPECT_EQ(h.OnPoll(100 * kMs, true, "", stale), std::nullopt);
  EXPECT_FALSE(h.stale());
  EXPECT_EQ(h.OnPoll(200 * kMs, false, "connection refused", stale), std::nullopt);
  EXPECT_EQ(h.OnPoll(399 * kMs, false, "connection refused", stale), std::nullopt);  // 299 ms
  EXPECT_EQ(h.OnPoll(400 * kMs, false, "timeout", stale), WT_EVENT_SOURCE_STALE);
  EXPECT_TRUE(h.stale());
  EXPECT_EQ(h.last_error(), "timeout");
  EXPECT_EQ(h.OnPoll(500 * kMs, false, "timeout", stale), std::nullopt);  // announced once
  EXPECT_EQ(h.OnPoll(600 * kMs, true, "", stale), WT_EVENT_SOURCE_FRESH);
  EXPECT_EQ(h.OnPoll(700 * kMs, true, "", stale), std::nullopt);
  EXPECT_EQ(h.last_error(), "");
  EXPECT_EQ(h.polls(), 7u);
  EXPECT_EQ(h.failed(), 4u);
}

TEST(SourceHealthRules, ASourceThatNeverAnsweredGoesStaleFromItsStart) {
  SourceHealth h(1000 * kMs);
  EXPECT_EQ(h.OnPoll(1200 * kMs, false, "refused", 300 * kMs), std::nullopt);
  EXPECT_EQ(h.OnPoll(1300 * kMs, false, "refused", 300 * kMs), WT_EVENT_SOURCE_STALE);
  EXPECT_FALSE(h.ever_ok());
}

// A socket that accepts connections (the kernel completes them from the backlog) and never
// answers: the worst a Prometheus server can do to its clients.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~SilentServer() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST(PrometheusSourceEngine, ASilentServerBlocksNoPickNoCycleAndNoShutdown) {
  SilentServer server;
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string cfg = R"({"seed": 1, "sources": {"prometheus": {"url": ")" + url +
                          R"(", "interval_ms": 60000, "timeout_ms": 60000, "stale_ms": 60000,
                             "queries": {"cpu": "up"}}}})";
  auto start = std::chrono::steady_clock::now();
  {
    testing::Harness h(cfg);
    h.Set({{"a", 1}, {"b", 1}});
    // The poll is under way (it waits a minute for an answer); picks and cycles go on.
    for (int i = 0; i < 100; ++i) {
      wt_pick p = WT_PICK_INIT;
      ASSERT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
      ASSERT_EQ(wt_service_complete(h.svc(), &p, 5, WT_OUTCOME_SUCCESS), WT_OK);
      ASSERT_EQ(wt_engine_advance(h.engine(), 5'000'000'000), WT_OK);
    }
    const json src = h.Snapshot()["sources"];
    ASSERT_EQ(src.size(), 1u) << src.dump();
    EXPECT_EQ(src[0]["name"], "prometheus");
    EXPECT_EQ(src[0]["url"], url);
    EXPECT_EQ(src[0]["state"], "starting");  // no answer yet, and no verdict before one
    EXPECT_EQ(src[0]["polls"], 0);           // the first poll still waits
    EXPECT_TRUE(src[0]["age_ms"].is_null());
    EXPECT_NE(src[0]["library"].get<std::string>().find("libcurl"), std::string::npos);
  }  // the engine goes while the transfer still waits
  EXPECT_LT(Seconds(start), 10.0) << "the engine's shutdown waited for the silent server";
}

TEST(PrometheusSourceEngine, ARefusedConnectionGoesStaleWithTheError) {
  int port = 0;
  {
    SilentServer s;  // a port that was free a moment ago and is closed now
    port = s.port();
  }
  testing::Harness h(R"({"seed": 1, "sources": {"prometheus": {"url": "http://127.0.0.1:)" +
                     std::to_string(port) +
                     R"(", "interval_ms": 100, "timeout_ms": 100, "stale_ms": 200,
                        "queries": {"memory": "x"}}}})");
  // The source's own thread decides and raises the event; wait for it (bounded), not for a
  // fixed time. The queue is read here because the harness's callback runs on that thread.
  const auto start = std::chrono::steady_clock::now();
  int stale = 0;
  std::string reason;
  while (stale == 0 && Seconds(start) < 20) {
    wt_event ev = WT_EVENT_INIT;
    int has = 0;
    ASSERT_EQ(wt_engine_poll_event(h.engine(), &ev, &has), WT_OK);
    if (!has) {
      usleep(20000);
      continue;
    }
    if (ev.type == WT_EVENT_SOURCE_STALE) {
      ++stale;
      reason = ev.reason;
      EXPECT_STREQ(ev.service, "");
    }
  }
  ASSERT_EQ(stale, 1);
  const json why = json::parse(reason);
  EXPECT_EQ(why["source"], "prometheus");
  EXPECT_GE(why["age_ms"].get<int>(), 200);
  const json src = h.Snapshot()["sources"][0];
  EXPECT_EQ(src["state"], "stale") << src.dump();
  EXPECT_NE(src["last_error"].get<std::string>().find("memory query: "), std::string::npos)
      << src.dump();
  EXPECT_EQ(why["error"], src["last_error"]);
  EXPECT_GE(src["failed_polls"].get<int>(), 2);
}

}  // namespace
}  // namespace weighted
