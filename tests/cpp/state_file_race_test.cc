// The state file under fire: readers attaching, reading and detaching while a real-clock writer
// publishes every 10 ms (run under ASan and TSan by make test-asan / test-tsan); a writer killed
// with SIGKILL mid-cycle, its last state read afterwards; and files a monitor must refuse.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "export/state_format.h"
#include "harness.h"
#include "state_file_helpers.h"

namespace weighted::testing {
namespace {

namespace sf = state_format;

std::string RealClockConfig(const std::string& path) {
  return fmt::format(R"({{"seed": 7, "controller": {{"interval_ms": 10}},
                         "export": {{"state_file": "{}", "state_history": 50}}}})", path);
}

uint64_t InfoField(wt_monitor* m, const char* key) {
  char* t = nullptr;
  if (wt_monitor_info_json(m, &t, nullptr) != WT_OK) return 0;
  const uint64_t v = json::parse(t)[key].get<uint64_t>();
  wt_free(t);
  return v;
}

TEST(StateFileRace, ReadersAttachAndDetachWhileTheWriterRuns) {
  TempDir dir;
  const std::string path = dir.file("race.state");
  const std::string cfg = RealClockConfig(path);
  wt_engine* engine = nullptr;
  ASSERT_EQ(wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_REAL, &engine), WT_OK)
      << wt_last_error();
  wt_service* svc = nullptr;
  ASSERT_EQ(wt_engine_service(engine, "orders", &svc), WT_OK);
  std::vector<wt_endpoint_spec> specs;
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) ids.push_back(fmt::format("10.0.0.{}:80", i));
  for (auto& id : ids) specs.push_back(Spec(id.c_str(), 100));
  ASSERT_EQ(wt_service_set_endpoints(svc, specs.data(), specs.size(), nullptr, nullptr, nullptr),
            WT_OK);

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread traffic([&] {
    for (int i = 0; !stop.load() && i < 5'000'000; ++i) {
      wt_pick p = WT_PICK_INIT;
      if (wt_service_pick(svc, &p) != WT_OK) continue;
      wt_service_complete(svc, &p, 5.0 + (p.index % 7), p.index == 3 ? WT_OUTCOME_HTTP_5XX
                                                                     : WT_OUTCOME_SUCCESS);
    }
  });
  // Endpoint sets change under the readers too (events, snapshot growth).
  std::thread churn([&] {
    for (int i = 0; !stop.load() && i < 200; ++i) {
      const size_t n = 40 + i % 11;
      wt_service_set_endpoints(svc, specs.data(), n, nullptr, nullptr, nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      uint64_t events_cursor = 0, history_cursor = 0;
      for (int round = 0; round < 60 && !stop.load(); ++round) {
        wt_monitor* m = nullptr;
        if (wt_monitor_open(path.c_str(), &m) != WT_OK) {
          ++failures;
          continue;
        }
        for (int i = 0; i < 5; ++i) {
          char* t = nullptr;
          wt_status s = wt_monitor_snapshot_json(m, &t, nullptr);
          if (s == WT_OK) {
            const json snap = json::parse(t, nullptr, false);
            if (snap.is_discarded() || !snap.contains("services")) ++failures;
            wt_free(t);
          } else if (s != WT_ERR_NOT_FOUND) {
            ADD_FAILURE() << "reader " << r << ": " << wt_last_error();
            ++failures;
          }
          if (wt_monitor_events_json(m, events_cursor, 0, &t, nullptr) == WT_OK) {
            const json ev = json::parse(t);
            for (const json& e : ev["events"]) {
              if (e["n"].get<uint64_t>() <= events_cursor) ++failures;
            }
            events_cursor = ev["next"];
            wt_free(t);
          } else {
            ++failures;
          }
          if (wt_monitor_history_json(m, history_cursor, 0, &t, nullptr) == WT_OK) {
            const json h = json::parse(t);
            for (const json& p : h["points"]) {
              if (p["n"].get<uint64_t>() <= history_cursor) ++failures;
            }
            history_cursor = h["next"];
            wt_free(t);
          } else {
            ++failures;
          }
        }
        wt_monitor_close(m);
      }
    });
  }
  for (auto& t : readers) t.join();
  // The writer kept publishing while it was read.
  wt_monitor* m = nullptr;
  ASSERT_EQ(wt_monitor_open(path.c_str(), &m), WT_OK);
  const uint64_t before = InfoField(m, "history_points");
  for (int i = 0; i < 1000 && InfoField(m, "history_points") < before + 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(InfoField(m, "history_points"), before + 3);
  stop = true;
  traffic.join();
  churn.join();
  wt_engine_destroy(engine);
  char* t = nullptr;
  ASSERT_EQ(wt_monitor_info_json(m, &t, nullptr), WT_OK);
  EXPECT_EQ(json::parse(t)["state"], "closed");
  wt_free(t);
  wt_monitor_close(m);
  EXPECT_EQ(failures.load(), 0);
}

// The child publishes as fast as it can (manual clock, 300 endpoints: each cycle writes about
// 300 KB), so a SIGKILL at a random moment often lands inside a write.
[[noreturn]] void RunWriter(const std::string& path) {
  const std::string cfg = Config(path, R"("state_history": 20)");
  wt_engine* engine = nullptr;
  if (wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_MANUAL, &engine) != WT_OK) _exit(2);
  wt_service* svc = nullptr;
  wt_engine_service(engine, "svc", &svc);
  std::vector<std::string> ids;
  std::vector<wt_endpoint_spec> specs;
  for (int i = 0; i < 300; ++i) ids.push_back(fmt::format("ep-{}", i));
  for (auto& id : ids) specs.push_back(Spec(id.c_str(), 100));
  wt_service_set_endpoints(svc, specs.data(), specs.size(), nullptr, nullptr, nullptr);
  for (uint64_t round = 0;; ++round) {
    for (int i = 0; i < 600; ++i) {
      wt_pick p = WT_PICK_INIT;
      wt_service_pick(svc, &p);
      wt_service_complete(svc, &p, 10, p.index == round % 300 ? WT_OUTCOME_TIMEOUT
                                                               : WT_OUTCOME_SUCCESS);
    }
    wt_engine_advance(engine, 5 * kSecond);
  }
}

TEST(StateFileRace, AWriterKilledMidCycleLeavesItsLastStateReadable) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 4; ++trial) {
    TempDir dir;
    const std::string path = dir.file("killed.state");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) RunWriter(path);
    // Wait (bounded) until it has published a few cycles, then kill it at a random moment.
    uint64_t points = 0;
    for (int i = 0; i < 2000 && points < 3; ++i) {
      wt_monitor* probe = nullptr;
      if (wt_monitor_open(path.c_str(), &probe) == WT_OK) {
        points = InfoField(probe, "history_points");
        wt_monitor_close(probe);
      }
      if (points < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_GE(points, 3u) << "the writer did not start";
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));

    Monitor m(path);
    const json snap = json::parse(m.Snapshot());
    EXPECT_EQ(snap["services"][0]["endpoints"].size(), 300u);
    const json info = json::parse(m.Info());
    EXPECT_EQ(info["state"], "gone");
    EXPECT_FALSE(info["writer_alive"].get<bool>());
    EXPECT_GT(info["last_write_unix_ms"].get<int64_t>(), 0);
    const json history = json::parse(m.History(0, 0));
    EXPECT_GE(history["points"].size(), 2u);
    for (const json& p : history["points"]) EXPECT_EQ(p["services"][0]["endpoints"].size(), 300u);
    EXPECT_TRUE(json::parse(m.Events(0, 0))["events"].is_array());
  }
}

// The writer moves to the CPU the cycle ran on to read what it wrote (a placement hint): where
// that CPU is outside the writer's own affinity (it inherited one CPU from the thread that
// created the engine, and the cycles run on another), the move is refused and every cycle is
// published all the same.
TEST(StateFileRace, AWriterThatCannotFollowTheCycleStillPublishesEachCycle) {
  cpu_set_t all;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof all, &all), 0);
  int first = -1, last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &all)) continue;
    if (first < 0) first = c;
    last = c;
  }
  ASSERT_GE(first, 0);
  auto pin = [](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  };
  TempDir dir;
  const std::string path = dir.file("placement.state");
  const std::string cfg = fmt::format(
      R"({{"controller": {{"interval_ms": 60000}}, "window": {{"length_ms": 60000}},
          "isolation": {{"max_ms": 60000}}, "export": {{"state_file": "{}"}}}})",
      path);
  ASSERT_EQ(pin(first), 0);
  wt_engine* engine = nullptr;
  const wt_status created = wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_REAL, &engine);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);
  ASSERT_EQ(created, WT_OK) << wt_last_error();
  ASSERT_EQ(pin(last), 0);
  wt_monitor* m = nullptr;
  ASSERT_EQ(wt_monitor_open(path.c_str(), &m), WT_OK) << wt_last_error();
  for (int cycle = 0; cycle < 5; ++cycle) {
    const uint64_t before = InfoField(m, "history_points");
    ASSERT_EQ(wt_engine_run_cycle(engine), WT_OK) << wt_last_error();
    for (int i = 0; i < 2000 && InfoField(m, "history_points") <= before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(InfoField(m, "history_points"), before + 1) << "cycle " << cycle;
  }
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);
  wt_monitor_close(m);
  wt_engine_destroy(engine);
}

}  // namespace
}  // namespace weighted::testing
