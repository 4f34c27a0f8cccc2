// Inputs that once slipped through or leaked: a config with bytes after a NUL, control
// characters of caller-given names in messages, and polled events read by several threads.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>

#include "harness.h"

namespace weighted::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Inputs, AConfigWithBytesAfterANulIsRefusedWithTheOffset) {
  const std::string text("{\"seed\":1}\0{\"seed\":-1}", 23);
  EXPECT_EQ(wt_config_validate(text.data(), text.size()), WT_ERR_CONFIG_PARSE);
  EXPECT_THAT(wt_last_error(), HasSubstr("NUL byte at offset 10"));
  EXPECT_THAT(wt_last_error(), HasSubstr("line 1, column 11"));
  wt_engine* e = nullptr;
  EXPECT_EQ(wt_engine_create(text.data(), text.size(), WT_CLOCK_MANUAL, &e), WT_ERR_CONFIG_PARSE);
  EXPECT_EQ(wt_config_validate(text.data(), 10), WT_OK) << "the part before the NUL is fine";
}

TEST(Inputs, ControlCharactersOfNamesAreEscapedInMessages) {
  Harness h;
  h.Set({{"a", 1}});
  EXPECT_EQ(wt_service_report(h.svc(), "x\nFAKE LOG LINE \"quoted\"", 1, 0), WT_ERR_NOT_FOUND);
  const std::string m = wt_last_error();
  EXPECT_THAT(m, HasSubstr(R"(no endpoint "x\nFAKE LOG LINE \"quoted\"")"));
  EXPECT_THAT(m, Not(HasSubstr("\n")));
  wt_endpoint_spec dup[] = {Spec("d\t\x01", 1), Spec("d\t\x01", 1)};
  EXPECT_EQ(wt_service_set_endpoints(h.svc(), dup, 2, nullptr, nullptr, nullptr),
            WT_ERR_DUPLICATE);
  EXPECT_THAT(wt_last_error(), HasSubstr(R"("d\t\x01" appears twice)"));
  const std::string cfg = "{\"controller\": {\"a\\nb\": 1}}";
  EXPECT_EQ(wt_config_validate(cfg.data(), cfg.size()), WT_ERR_CONFIG_INVALID);
  EXPECT_THAT(wt_last_error(), HasSubstr(R"(/controller/a\nb: unknown key)"));
}

// Two threads poll one engine: each thread's event strings stay its own until its next poll
// (they used to live in one slot per engine, freed by whichever thread polled next).
TEST(Inputs, PolledEventStringsBelongToThePollingThread) {
  wt_engine* e = nullptr;
  ASSERT_EQ(wt_engine_create("{}", 2, WT_CLOCK_MANUAL, &e), WT_OK);
  wt_service* s = nullptr;
  ASSERT_EQ(wt_engine_service(e, "svc", &s), WT_OK);
  std::vector<std::string> ids;
  for (int i = 0; i < 2000; ++i) ids.push_back("endpoint-" + std::to_string(i));
  for (int round = 0; round < 2; ++round) {
    std::vector<wt_endpoint_spec> specs;
    for (int i = round; i < 2000; i += 2) specs.push_back(Spec(ids[i].c_str(), 1));
    ASSERT_EQ(wt_service_set_endpoints(s, specs.data(), specs.size(), nullptr, nullptr, nullptr),
              WT_OK);
  }
  std::atomic<int> bad{0};
  auto poller = [&] {
    for (;;) {
      wt_event ev = WT_EVENT_INIT;
      int has = 0;
      if (wt_engine_poll_event(e, &ev, &has) != WT_OK || !has) return;
      const std::string endpoint = ev.endpoint;  // copied now; compared after others polled
      std::this_thread::yield();
      if (endpoint != ev.endpoint || std::string(ev.service) != "svc") bad.fetch_add(1);
    }
  };
  std::thread a(poller), b(poller);
  a.join();
  b.join();
  EXPECT_EQ(bad.load(), 0);
  wt_engine_destroy(e);
}

}  // namespace
}  // namespace weighted::testing
