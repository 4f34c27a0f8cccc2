// What the engine owns and hands back: the keys it assigns, the caller's user pointers (returned
// by picks, released exactly once when no pick can return them), the callback's release hook,
// service removal, and the entry names in messages.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gmock/gmock.h>

#include "harness.h"

namespace weighted::testing {
namespace {

using ::testing::HasSubstr;

// Counts releases per pointer; each user pointer below points at one of its counters.
struct Releases {
  std::map<const void*, int> count;
  static void Release(void* user) { ++*static_cast<int*>(user); }
};

wt_endpoints_options Releasing() {
  wt_endpoints_options o = WT_ENDPOINTS_OPTIONS_INIT;
  o.release_user = Releases::Release;
  return o;
}

TEST(Ownership, SetEndpointsHandsBackTheKeysItAssigned) {
  Harness h;
  wt_endpoint_spec specs[] = {Spec("a", 1), Spec("b", 1)};
  uint64_t keys[2] = {0, 0}, epoch = 0;
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), specs, 2, nullptr, keys, &epoch), WT_OK);
  EXPECT_EQ(epoch, 1u);
  for (int i = 0; i < 2; ++i) {
    uint64_t k = 0;
    ASSERT_EQ(wt_service_endpoint_key(h.svc(), specs[i].id, &k), WT_OK);
    EXPECT_EQ(keys[i], k);
  }
  // An endpoint that stays keeps its key; a new one gets a new key.
  wt_endpoint_spec next[] = {Spec("c", 1), Spec("a", 1)};
  uint64_t next_keys[2] = {0, 0};
  ASSERT_EQ(wt_service_set_endpoints(h.svc(), next, 2, nullptr, next_keys, nullptr), WT_OK);
  EXPECT_EQ(next_keys[1], keys[0]);
  EXPECT_NE(next_keys[0], keys[1]);
}

TEST(Ownership, APickReturnsItsSpecsUserPointerAndEachIsReleasedOnceWhenNoPickCanReturnIt) {
  int released[3] = {0, 0, 0};
  {
    Harness h;
    const wt_endpoints_options o = Releasing();
    wt_endpoint_spec first[] = {Spec("a", 1, &released[0]), Spec("b", 1, &released[1])};
    ASSERT_EQ(wt_service_set_endpoints(h.svc(), first, 2, &o, nullptr, nullptr), WT_OK);
    for (int i = 0; i < 200; ++i) {
      wt_pick p = WT_PICK_INIT;
      ASSERT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
      EXPECT_EQ(p.user, first[p.index].user);
    }
    EXPECT_EQ(released[0] + released[1], 0) << "the set is still in force";
    // "a" stays with a new pointer, "b" leaves: the first set's pointers go, each once.
    wt_endpoint_spec second[] = {Spec("a", 1, &released[2])};
    ASSERT_EQ(wt_service_set_endpoints(h.svc(), second, 1, &o, nullptr, nullptr), WT_OK);
    EXPECT_EQ(released[0], 1);
    EXPECT_EQ(released[1], 1);
    EXPECT_EQ(released[2], 0);
    wt_pick p = WT_PICK_INIT;
    ASSERT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
    EXPECT_EQ(p.user, &released[2]);
    // A refused set takes nothing: its pointers stay the caller's.
    int refused = 0;
    wt_endpoint_spec dup[] = {Spec("x", 1, &refused), Spec("x", 1, &refused)};
    EXPECT_EQ(wt_service_set_endpoints(h.svc(), dup, 2, &o, nullptr, nullptr), WT_ERR_DUPLICATE);
    EXPECT_EQ(refused, 0);
  }
  EXPECT_EQ(released[2], 1) << "destroying the engine releases the set in force";
  EXPECT_EQ(released[0] + released[1], 2) << "and nothing twice";
}

TEST(Ownership, RemovingAServiceReleasesItsPointersRaisesAnEventAndFreesItsName) {
  int released = 0;
  Harness h(R"({"seed": 1, "limits": {"max_services": 2}})");
  wt_service* other = nullptr;
  ASSERT_EQ(wt_engine_service(h.engine(), "other", &other), WT_OK);
  const wt_endpoints_options o = Releasing();
  wt_endpoint_spec specs[] = {Spec("a", 1, &released), Spec("b", 1)};
  ASSERT_EQ(wt_service_set_endpoints(other, specs, 2, &o, nullptr, nullptr), WT_OK);
  h.Set({{"s", 1}});
  ASSERT_EQ(wt_service_remove(other), WT_OK) << wt_last_error();
  EXPECT_EQ(released, 1);
  EXPECT_EQ(h.Count(WT_EVENT_SERVICE_REMOVED), 1);
  const json snap = h.Snapshot();
  ASSERT_EQ(snap["services"].size(), 1u);
  EXPECT_EQ(snap["services"][0]["name"], "svc");
  // The slot under limits.max_services is free again, and the name starts afresh.
  wt_service* again = nullptr;
  ASSERT_EQ(wt_engine_service(h.engine(), "other", &again), WT_OK) << wt_last_error();
  wt_pick p = WT_PICK_INIT;
  EXPECT_EQ(wt_service_pick(again, &p), WT_ERR_NO_ENDPOINT);
  // The service left in the engine goes on as before.
  h.Drive(2, 20, [](const std::string&) { return Ok(); });
}

TEST(Ownership, RemovingServicesWhileTheControllerRunsOnTheRealClock) {
  const std::string cfg = R"({"controller": {"interval_ms": 10}, "window": {"length_ms": 20}})";
  wt_engine* e = nullptr;
  ASSERT_EQ(wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_REAL, &e), WT_OK);
  std::atomic<int> released{0};
  wt_endpoints_options o = WT_ENDPOINTS_OPTIONS_INIT;
  o.release_user = [](void* user) { static_cast<std::atomic<int>*>(user)->fetch_add(1); };
  for (int round = 0; round < 200; ++round) {
    wt_service* s = nullptr;
    ASSERT_EQ(wt_engine_service(e, "churn", &s), WT_OK);
    wt_endpoint_spec specs[] = {Spec("a", 1, &released), Spec("b", 2, &released)};
    ASSERT_EQ(wt_service_set_endpoints(s, specs, 2, &o, nullptr, nullptr), WT_OK);
    wt_pick p = WT_PICK_INIT;
    ASSERT_EQ(wt_service_pick(s, &p), WT_OK);
    ASSERT_EQ(wt_service_complete(s, &p, 1, WT_OUTCOME_SUCCESS), WT_OK);
    ASSERT_EQ(wt_service_remove(s), WT_OK);
  }
  wt_engine_destroy(e);
  EXPECT_EQ(released.load(), 400);
}

// A picker that pins each user pointer before the set can go (wt_service_pick_pinned) never
// sees one released under it, however fast the sets change.
TEST(Ownership, PinnedPicksNeverSeeTheirPointerReleasedUnderThem) {
  struct Object {
    std::atomic<int> refs{1};  // the engine's, until released
    std::atomic<bool> dead{false};
    void Drop() {
      if (refs.fetch_sub(1) == 1) dead.store(true);
    }
  };
  std::vector<std::unique_ptr<Object>> objects;  // outlives the engine, which releases into it
  std::mutex objects_mu;
  Harness h;
  wt_endpoints_options o = WT_ENDPOINTS_OPTIONS_INIT;
  o.release_user = [](void* user) { static_cast<Object*>(user)->Drop(); };
  auto install = [&](int n) {
    std::vector<wt_endpoint_spec> specs;
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back("e" + std::to_string(i));
    for (int i = 0; i < n; ++i) {
      std::lock_guard lock(objects_mu);
      objects.push_back(std::make_unique<Object>());
      specs.push_back(Spec(ids[i].c_str(), 1, objects.back().get()));
    }
    ASSERT_EQ(wt_service_set_endpoints(h.svc(), specs.data(), n, &o, nullptr, nullptr), WT_OK);
  };
  install(3);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, picks{0};
  std::thread picker([&] {
    while (!stop.load()) {
      wt_pick p = WT_PICK_INIT;
      const wt_status s = wt_service_pick_pinned(
          h.svc(), &p, [](void*, void* user) { static_cast<Object*>(user)->refs.fetch_add(1); },
          nullptr);
      if (s != WT_OK) continue;
      auto* obj = static_cast<Object*>(p.user);
      if (obj->dead.load()) bad.fetch_add(1);
      obj->Drop();
      picks.fetch_add(1);
    }
  });
  for (int round = 0; round < 300; ++round) install(1 + round % 4);
  while (picks.load() < 1000) std::this_thread::yield();
  stop.store(true);
  picker.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Ownership, TheEventCallbacksUserIsReleasedOnceAfterItsLastCall) {
  struct Ctx {
    int calls = 0;
    int released = 0;
  } first, second;
  auto on_event = [](void* u, const wt_event*) { ++static_cast<Ctx*>(u)->calls; };
  auto release = [](void* u) { ++static_cast<Ctx*>(u)->released; };
  wt_engine* e = nullptr;
  ASSERT_EQ(wt_engine_create("{}", 2, WT_CLOCK_MANUAL, &e), WT_OK);
  ASSERT_EQ(wt_engine_set_event_callback(e, on_event, &first, release), WT_OK);
  ASSERT_EQ(wt_engine_reload(e, "{}", 2), WT_OK);  // one config_reloaded event
  EXPECT_EQ(first.calls, 1);
  EXPECT_EQ(first.released, 0);
  ASSERT_EQ(wt_engine_set_event_callback(e, on_event, &second, release), WT_OK);
  EXPECT_EQ(first.released, 1) << "replaced: released once";
  ASSERT_EQ(wt_engine_reload(e, "{}", 2), WT_OK);
  EXPECT_EQ(first.calls, 1);
  EXPECT_EQ(second.calls, 1);
  EXPECT_EQ(second.released, 0);
  wt_engine_destroy(e);
  EXPECT_EQ(second.released, 1) << "destroyed: released once";
  EXPECT_EQ(first.released, 1);
}

TEST(Ownership, MessagesNameTheEntryPointTheCallerCalled) {
  Harness h;
  h.Set({{"a", 1}});
  wt_pick p = WT_PICK_INIT;
  ASSERT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
  h.Set({{"b", 1}});  // "a" leaves: finishing its pick is stale
  EXPECT_EQ(wt_service_cancel(h.svc(), &p), WT_ERR_STALE);
  EXPECT_THAT(wt_last_error(), HasSubstr("wt_service_cancel:"));
  EXPECT_EQ(wt_service_complete(h.svc(), &p, 1, WT_OUTCOME_SUCCESS), WT_ERR_STALE);
  EXPECT_THAT(wt_last_error(), HasSubstr("wt_service_complete:"));
  EXPECT_EQ(wt_engine_reload_from_file(h.engine(), "/dev/null"), WT_ERR_CONFIG_PARSE);
  const std::string one_service = R"({"limits":{"max_services":1}})";
  ASSERT_EQ(wt_engine_reload(h.engine(), one_service.data(), one_service.size()), WT_OK);
  wt_service* s2 = nullptr;
  EXPECT_EQ(wt_engine_service(h.engine(), "second", &s2), WT_ERR_LIMIT);
  EXPECT_THAT(wt_last_error(), HasSubstr("wt_engine_service:"));
}

TEST(Ownership, NameTablesCoverEveryValueOnce) {
  std::set<std::string> outcomes, events;
  for (int o = 0; o < WT_OUTCOME_COUNT; ++o) {
    ASSERT_NE(wt_outcome_name(o), nullptr) << o;
    outcomes.insert(wt_outcome_name(o));
  }
  EXPECT_EQ(outcomes.size(), size_t{WT_OUTCOME_COUNT});
  EXPECT_EQ(wt_outcome_name(-1), nullptr);
  EXPECT_EQ(wt_outcome_name(WT_OUTCOME_COUNT), nullptr);
  for (int t = WT_EVENT_WEIGHT_CHANGED; t <= WT_EVENT_STATE_CHANGED; ++t) {
    ASSERT_NE(wt_event_type_name(t), nullptr) << t;
    events.insert(wt_event_type_name(t));
  }
  EXPECT_EQ(events.size(), size_t{WT_EVENT_STATE_CHANGED});
  EXPECT_EQ(wt_event_type_name(0), nullptr);
  EXPECT_EQ(wt_event_type_name(WT_EVENT_STATE_CHANGED + 1), nullptr);
}

// The header promises a callback may reload or advance: the events those calls raise come after
// the running callback returns, in order, on the same thread, instead of a deadlock on the
// callback's own lock. A watchdog turns a hang into a failure.
TEST(Ownership, ACallbackThatReloadsAndAdvancesGetsTheirEventsAfterItReturns) {
  struct Ctx {
    wt_engine* e = nullptr;
    std::vector<int> seen;
    int depth = 0, max_depth = 0;
    wt_status set_again = WT_OK;
  } ctx;
  ASSERT_EQ(wt_engine_create("{}", 2, WT_CLOCK_MANUAL, &ctx.e), WT_OK);
  ASSERT_EQ(wt_engine_set_event_callback(
                ctx.e,
                [](void* u, const wt_event* ev) {
                  auto& c = *static_cast<Ctx*>(u);
                  c.max_depth = std::max(c.max_depth, ++c.depth);
                  c.seen.push_back(ev->type);
                  if (c.seen.size() == 1) {
                    EXPECT_EQ(wt_engine_reload(c.e, "{}", 2), WT_OK);  // raises config_reloaded
                    c.set_again = wt_engine_set_event_callback(c.e, nullptr, nullptr, nullptr);
                  }
                  --c.depth;
                },
                &ctx, nullptr),
            WT_OK);
  auto done = std::async(std::launch::async, [&] { return wt_engine_reload(ctx.e, "{}", 2); });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    std::fprintf(stderr, "a reload from inside the event callback deadlocked\n");
    std::abort();
  }
  EXPECT_EQ(done.get(), WT_OK);
  EXPECT_EQ(ctx.seen, (std::vector<int>{WT_EVENT_CONFIG_RELOADED, WT_EVENT_CONFIG_RELOADED}));
  EXPECT_EQ(ctx.max_depth, 1) << "the nested event waited for the running callback to return";
  EXPECT_EQ(ctx.set_again, WT_ERR_INVALID_ARGUMENT) << "setting the callback from inside it";
  wt_engine_destroy(ctx.e);
}

}  // namespace
}  // namespace weighted::testing
