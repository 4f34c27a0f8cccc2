// Regressions for bugs found by the fuzzers (fuzz/) and the reliability review (docs/reliability.md). Each
// test failed before its fix; docs/reliability.md lists them.
#include <climits>
#include <fstream>
#include <string>

#include <gmock/gmock.h>

#include "harness.h"

namespace weighted::testing {
namespace {

using ::testing::HasSubstr;

// fuzz_api: an endpoint id or a service name that is not UTF-8 used to be accepted, after which
// every snapshot failed with WT_ERR_INTERNAL (JSON is UTF-8), so the dashboard went blind.
TEST(FuzzRegressions, NamesThatAreNotUtf8AreRefusedWhereTheyEnter) {
  Harness h;
  h.Set({{"a", 1}});
  const json before = h.Snapshot();
  for (const char* bad : {"\xff\xfe", "caf\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    wt_endpoint_spec spec[] = {Spec("ok", 1), Spec(bad, 1)};
    EXPECT_EQ(wt_service_set_endpoints(h.svc(), spec, 2, nullptr, nullptr, nullptr), WT_ERR_INVALID_ARGUMENT) << bad;
    EXPECT_THAT(wt_last_error(), HasSubstr("specs[1].id is not valid UTF-8"));
    wt_service* s = nullptr;
    EXPECT_EQ(wt_engine_service(h.engine(), bad, &s), WT_ERR_INVALID_ARGUMENT);
    EXPECT_THAT(wt_last_error(), HasSubstr("name is not valid UTF-8"));
  }
  EXPECT_EQ(h.Snapshot(), before) << "the snapshot still works and nothing changed";
  // Valid multi-byte UTF-8 is fine, and shows up in the snapshot as it is.
  h.Set({{"caf\xc3\xa9", 1}, {"\xf0\x9f\x98\x80", 2}});
  EXPECT_EQ(h.Snapshot()["services"][0]["endpoints"][0]["id"], "caf\xc3\xa9");
}

// fuzz_config: the resolved form of a valid document must be valid itself. With a small
// limits.max_config_bytes it was not ({"limits": {"max_config_bytes": 100}} resolved to 1079
// bytes and was refused), so the floor is now 16384; the largest resolved document fits it.
TEST(FuzzRegressions, TheResolvedFormOfTheLargestConfigFitsTheSmallestLimit) {
  json rules = json::array();
  for (int i = 0; i < 64; ++i) {
    rules.push_back({{"metric", "latency_mean"}, {"threshold_ms", 0.12345678901234567 + i},
                     {"relative", 1.2345678901234567}, {"penalty", 0.012345678901234567}});
  }
  json doc = {{"seed", 18446744073709551615ull}, {"rules", rules},
              {"limits", {{"max_config_bytes", 16384}, {"max_latency_ms", 0.12345678901234567e7}}},
              {"isolation", {{"probe_min_per_s", 0.12345678901234567}, {"probe_share", 0.12345678901234567}}}};
  const std::string text = doc.dump();
  char* resolved = nullptr;
  ASSERT_EQ(wt_config_resolve(text.data(), text.size(), &resolved), WT_OK) << wt_last_error();
  const std::string first(resolved);
  wt_free(resolved);
  EXPECT_LT(first.size(), 16384u);
  char* again = nullptr;
  ASSERT_EQ(wt_config_resolve(first.data(), first.size(), &again), WT_OK) << wt_last_error();
  EXPECT_EQ(first, again);
  wt_free(again);

  const std::string small = R"({"limits": {"max_config_bytes": 100}})";
  EXPECT_EQ(wt_config_validate(small.data(), small.size()), WT_ERR_CONFIG_INVALID);
  EXPECT_THAT(wt_last_error(), HasSubstr("[16384, 1048576]"));
}

// Review: now + delta_ns overflowed int64 (undefined behaviour) for a large delta.
TEST(FuzzRegressions, AdvancingPastTheEndOfTheManualClockIsRefused) {
  Harness h;
  ASSERT_EQ(wt_engine_advance(h.engine(), 1000), WT_OK);
  const json before = h.Snapshot();
  EXPECT_EQ(wt_engine_advance(h.engine(), LLONG_MAX), WT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(wt_last_error(), HasSubstr("past its end"));
  EXPECT_EQ(h.Snapshot(), before);
  int64_t now = 0;
  ASSERT_EQ(wt_engine_now(h.engine(), &now), WT_OK);
  EXPECT_EQ(now, 1000);
}

// Review: a config file was read whole before its size was checked, so /dev/zero (or any huge
// file) exhausted memory instead of failing with WT_ERR_LIMIT.
TEST(FuzzRegressions, AnEndlessConfigFileIsRefusedWithoutReadingItAll) {
  wt_engine* e = nullptr;
  EXPECT_EQ(wt_engine_create_from_file("/dev/zero", WT_CLOCK_MANUAL, &e), WT_ERR_LIMIT);
  EXPECT_THAT(wt_last_error(), HasSubstr("more than limits.max_config_bytes = 1048576"));
  Harness h;
  const json before = h.Snapshot();
  EXPECT_EQ(wt_engine_reload_from_file(h.engine(), "/dev/zero"), WT_ERR_LIMIT);
  EXPECT_EQ(h.Snapshot(), before);
}

}  // namespace
}  // namespace weighted::testing
