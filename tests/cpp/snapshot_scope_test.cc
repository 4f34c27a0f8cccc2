// wt_service_snapshot_json: one service's, or one endpoint's, part of the snapshot, the same
// objects the whole snapshot holds.
#include <string>

#include <gtest/gtest.h>

#include "harness.h"

namespace weighted::testing {
namespace {

json Part(wt_service* svc, const char* endpoint) {
  char* text = nullptr;
  size_t len = 0;
  EXPECT_EQ(wt_service_snapshot_json(svc, endpoint, &text, &len), WT_OK) << wt_last_error();
  json j = json::parse(std::string(text, len));
  wt_free(text);
  return j;
}

TEST(SnapshotScope, AServiceAndAnEndpointAreTheWholeSnapshotsEntries) {
  Harness h;
  wt_service* other = h.AddService("other", "x:1", 3);
  ASSERT_NE(other, nullptr);
  h.Set({{"a", 1}, {"b", 2}, {"c", 3}});
  h.Drive(12, 50, [](const std::string& id) {
    return id == "b" ? Outcome{5, WT_OUTCOME_HTTP_5XX} : Ok(id == "c" ? 80 : 20);
  });
  const json whole = h.Snapshot();
  ASSERT_EQ(whole["services"].size(), 2u);
  const json& svc = whole["services"][0]["name"] == "svc" ? whole["services"][0] : whole["services"][1];

  const json part = Part(h.svc(), nullptr);
  ASSERT_EQ(part["services"].size(), 1u);
  EXPECT_EQ(part["services"][0], svc);
  for (const char* key : {"version", "time_ns", "clock", "profile", "events", "sources"}) {
    EXPECT_EQ(part[key], whole[key]) << key;
  }
  const json one = Part(h.svc(), "c");
  ASSERT_EQ(one["services"][0]["endpoints"].size(), 1u);
  EXPECT_EQ(one["services"][0]["endpoints"][0], svc["endpoints"][2]);
  EXPECT_EQ(one["services"][0]["endpoints"][0]["index"], 2);
  EXPECT_EQ(one["services"][0]["removed_totals"], svc["removed_totals"]);
}

TEST(SnapshotScope, AnEndpointNotInTheSetIsNotFoundAndNothingIsWritten) {
  Harness h;
  h.Set({{"a", 1}});
  char* text = reinterpret_cast<char*>(0x1);
  size_t len = 77;
  EXPECT_EQ(wt_service_snapshot_json(h.svc(), "zz", &text, &len), WT_ERR_NOT_FOUND);
  EXPECT_STREQ(wt_last_error(), "wt_service_snapshot_json: no endpoint \"zz\" in service \"svc\"");
  EXPECT_EQ(text, reinterpret_cast<char*>(0x1));
  EXPECT_EQ(len, 77u);
  EXPECT_EQ(wt_service_snapshot_json(h.svc(), "", &text, &len), WT_ERR_NOT_FOUND);
  EXPECT_EQ(wt_service_snapshot_json(h.svc(), "a", nullptr, &len), WT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(wt_last_error(), "wt_service_snapshot_json: out_json is NULL");
  EXPECT_EQ(wt_service_snapshot_json(nullptr, "a", &text, &len), WT_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace weighted::testing
