// Deterministic aperture: the subset for a fleet whose size and each client's place in it are
// known (subset.client_count, subset.client_index). What it is for is balance, so the tests
// count clients per endpoint against rendezvous's on the same ids, and churn, which must stay as
// small as rendezvous's.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness.h"
#include "runtime/subset.h"

namespace weighted::testing {
namespace {

std::vector<std::string> Ids(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(fmt::format("10.1.{}.{}:8080", i / 250, i % 250));
  return ids;
}

std::set<std::string> Window(uint32_t index, uint32_t count, const std::vector<std::string>& ids,
                             size_t size) {
  std::vector<std::string_view> views(ids.begin(), ids.end());
  const std::vector<uint8_t> in = ChooseAperture(index, count, views, size);
  std::set<std::string> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (in[i]) out.insert(ids[i]);
  }
  return out;
}

// Clients per endpoint over a fleet of `clients`, by aperture or (client ids "c-<i>") rendezvous.
std::vector<int> ClientsPerEndpoint(const std::vector<std::string>& ids, uint32_t clients,
                                    size_t size, bool aperture) {
  std::vector<std::string_view> views(ids.begin(), ids.end());
  std::vector<int> count(ids.size(), 0);
  for (uint32_t c = 0; c < clients; ++c) {
    const std::vector<uint8_t> in = aperture ? ChooseAperture(c, clients, views, size)
                                             : ChooseSubset(fmt::format("c-{}", c), views, size);
    EXPECT_EQ(std::count(in.begin(), in.end(), 1), static_cast<long>(size));
    for (size_t i = 0; i < ids.size(); ++i) count[i] += in[i];
  }
  return count;
}

TEST(Aperture, SpreadsClientsEvenlyWhereRendezvousSpreadsThemBinomially) {
  const std::vector<std::string> ids = Ids(50);
  // 100 clients x 12 / 50 endpoints = 24 per endpoint, a whole number: exactly that.
  const std::vector<int> even = ClientsPerEndpoint(ids, 100, 12, true);
  EXPECT_EQ(*std::min_element(even.begin(), even.end()), 24);
  EXPECT_EQ(*std::max_element(even.begin(), even.end()), 24);
  const std::vector<int> random = ClientsPerEndpoint(ids, 100, 12, false);
  EXPECT_GT(*std::max_element(random.begin(), random.end()), 28);  // ~24 + 2 sd of 4.3
  EXPECT_LT(*std::min_element(random.begin(), random.end()), 20);
  // 10 clients: 2.4 per endpoint on average, so 2 or 3, never 1 or 4.
  const std::vector<int> few = ClientsPerEndpoint(ids, 10, 12, true);
  EXPECT_EQ(*std::min_element(few.begin(), few.end()), 2);
  EXPECT_EQ(*std::max_element(few.begin(), few.end()), 3);
  // 7 clients of 500 endpoints, 12 each: at most one per endpoint.
  const std::vector<int> sparse = ClientsPerEndpoint(Ids(500), 7, 12, true);
  EXPECT_EQ(*std::max_element(sparse.begin(), sparse.end()), 1);
}

TEST(Aperture, OneEndpointAddedOrRemovedReplacesAtMostOneEntryPerClient) {
  const std::vector<std::string> ids = Ids(100);
  std::vector<std::string> added = ids;
  added.push_back("10.9.9.9:8080");
  int changed_on_add = 0;
  for (uint32_t c = 0; c < 300; ++c) {
    const std::set<std::string> before = Window(c, 300, ids, 10);
    ASSERT_EQ(before.size(), 10u);
    const std::set<std::string> after = Window(c, 300, added, 10);
    std::vector<std::string> out, in;
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::back_inserter(out));
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                        std::back_inserter(in));
    ASSERT_LE(out.size(), 1u) << "client " << c;
    ASSERT_EQ(in.size(), out.size()) << "client " << c;
    changed_on_add += static_cast<int>(out.size());
    // Removing a member replaces it and keeps the other nine.
    std::vector<std::string> removed = ids;
    removed.erase(std::find(removed.begin(), removed.end(), *before.begin()));
    const std::set<std::string> after_remove = Window(c, 300, removed, 10);
    std::vector<std::string> kept;
    std::set_intersection(before.begin(), before.end(), after_remove.begin(), after_remove.end(),
                          std::back_inserter(kept));
    ASSERT_GE(kept.size(), 9u) << "client " << c;
  }
  // Not nobody (the ring did shift) and not everybody.
  EXPECT_GT(changed_on_add, 0);
  EXPECT_LT(changed_on_add, 300);
}

TEST(Aperture, ClientsOfAFleetPartitionTheEndpointsThroughTheEngine) {
  // Four clients of twenty endpoints with five each: between them every endpoint, once.
  std::multiset<std::string> all;
  for (int k = 0; k < 4; ++k) {
    Harness h(fmt::format(R"({{"seed": 7, "picker": {{"mode": "weighted"}},
        "subset": {{"mode": "fixed", "size": 5, "client_count": 4, "client_index": {}}}}})", k));
    std::vector<std::pair<std::string, double>> set;
    for (const std::string& id : Ids(20)) set.emplace_back(id, 100);
    h.Set(set);
    const json snap = h.Snapshot();
    for (const auto& ep : snap["services"][0]["endpoints"]) {
      if (ep["in_subset"].get<bool>()) all.insert(ep["id"].get<std::string>());
    }
    auto picks = h.Drive(5, 100, [](const std::string&) { return Ok(10); });
    EXPECT_EQ(picks.size(), 5u);
  }
  EXPECT_EQ(all.size(), 20u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 20u);
}

TEST(Aperture, APlaceOutsideTheFleetIsRefusedWithBothKeys) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"subset": {"mode": "fixed", "client_count": 4, "client_index": 4}})",
       "subset.client_index (4) is not below subset.client_count (4)"},
      {R"({"subset": {"mode": "fixed", "client_id": "a", "client_index": 2}})",
       "subset.client_index is 2 but subset.client_count is 0"},
      {R"({"subset": {"client_count": -1}})", "/subset/client_count"},
      {R"({"subset": {"mode": "fixed"}})", "or set subset.client_count and subset.client_index"},
  };
  for (const auto& [doc, what] : bad) {
    wt_engine* e = nullptr;
    EXPECT_EQ(wt_engine_create(doc.data(), doc.size(), WT_CLOCK_MANUAL, &e), WT_ERR_CONFIG_INVALID)
        << doc;
    EXPECT_NE(std::string(wt_last_error()).find(what), std::string::npos)
        << doc << ": " << wt_last_error();
    EXPECT_EQ(e, nullptr);
  }
  // A place in a known fleet needs no client id.
  const std::string ok = R"({"subset": {"mode": "fixed", "client_count": 4, "client_index": 3}})";
  wt_engine* e = nullptr;
  ASSERT_EQ(wt_engine_create(ok.data(), ok.size(), WT_CLOCK_MANUAL, &e), WT_OK) << wt_last_error();
  wt_engine_destroy(e);
}

}  // namespace
}  // namespace weighted::testing
