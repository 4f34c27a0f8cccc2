// The snapshot JSON rendered from its record in pieces, as wt_engine_snapshot_json does while it
// encodes (the record passes through a small buffer), is the text the whole record renders, as a
// state file's reader renders it.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "abi/c_api.h"
#include "export/snapshot_json.h"
#include "export/snapshot_record.h"
#include "export/text_block.h"
#include "harness.h"

namespace weighted::testing {
namespace {

struct Pieces {
  RecordRenderer renderer{std::string(), 0};
  int fed = 0;
  static void Feed(void* ctx, std::string_view piece) {
    auto* p = static_cast<Pieces*>(ctx);
    ++p->fed;
    EXPECT_TRUE(p->renderer.Feed(piece, false)) << p->renderer.error();
  }
};

TEST(SnapshotPieces, PiecesRenderTheTextOfTheWholeRecord) {
  Harness h;
  wt_service* other = h.AddService("other", "x:1", 3);
  ASSERT_NE(other, nullptr);
  std::vector<std::pair<std::string, double>> set;
  for (int i = 0; i < 40; ++i) set.push_back({"10.0.0." + std::to_string(i) + ":80", 1 + i % 5});
  h.Set(set);
  h.Drive(6, 400, [](const std::string& id) {
    return id == "10.0.0.3:80" ? Outcome{5, WT_OUTCOME_HTTP_5XX} : Ok(id.size() % 2 ? 30 : 12);
  });
  Engine& engine = *AsEngine(h.engine());
  std::string whole, want;
  ByteSink all(&whole);
  EncodeSnapshot(engine, all, nullptr, nullptr);
  ASSERT_EQ(RenderSnapshot(whole, &want), "");
  ASSERT_EQ(json::parse(want)["services"].size(), 2u);

  // A piece after every endpoint (41 of them, the rest last), after a few, and none before the end.
  for (size_t threshold : {size_t{1}, size_t{3000}, size_t{1} << 30}) {
    Pieces p;
    std::string record;
    ByteSink sink(&record);
    sink.OnBoundary(threshold, &Pieces::Feed, &p);
    EncodeSnapshot(engine, sink, nullptr, nullptr);
    ASSERT_TRUE(p.renderer.Feed(record, true)) << p.renderer.error();
    EXPECT_EQ(p.renderer.Take(), want) << threshold;
    if (threshold == 1) EXPECT_EQ(p.fed, 41);
    if (threshold == size_t{1} << 30) EXPECT_EQ(p.fed, 0);
  }
  EXPECT_EQ(SnapshotJson(engine), want);
}

// The C ABI's snapshot is written straight into the memory it hands out (SnapshotText), its size
// estimated from the last snapshot's: the same bytes as the text rendered from the whole record,
// for the engine, one service and one endpoint, the first time (no estimate yet), again (sized
// by the last), and after the fleet grew past what the last snapshot's size predicted.
TEST(SnapshotPieces, TheCApisTextIsTheRecordsWhateverItsBufferWasSizedBy) {
  Harness h;
  Engine& engine = *AsEngine(h.engine());
  const auto expect_same = [&](const char* when) {
    std::string whole, want;
    ByteSink all(&whole);
    EncodeSnapshot(engine, all, nullptr, nullptr);
    ASSERT_EQ(RenderSnapshot(whole, &want), "");
    for (int again = 0; again < 2; ++again) {
      char* out = nullptr;
      size_t len = 0;
      ASSERT_EQ(wt_engine_snapshot_json(h.engine(), &out, &len), WT_OK);
      EXPECT_EQ(len, want.size()) << when;
      EXPECT_EQ(std::strlen(out), len) << when;
      EXPECT_EQ(std::string_view(out, len), want) << when;
      wt_free(out);
    }
    const SnapshotScope one{AsService(h.svc()), "10.0.0.3:80"};
    MallocedText part = SnapshotText(engine, one);
    EXPECT_EQ(std::string_view(part.data.get(), part.size), SnapshotJson(engine, one)) << when;
    const SnapshotScope service{AsService(h.svc()), {}};
    char* out = nullptr;
    size_t len = 0;
    ASSERT_EQ(wt_service_snapshot_json(h.svc(), nullptr, &out, &len), WT_OK);
    EXPECT_EQ(std::string_view(out, len), SnapshotJson(engine, service)) << when;
    wt_free(out);
  };
  std::vector<std::pair<std::string, double>> set;
  for (int i = 0; i < 5; ++i) set.push_back({"10.0.0." + std::to_string(i) + ":80", 1 + i % 3});
  h.Set(set);
  h.Drive(3, 50, [](const std::string& id) { return Ok(id.size() % 2 ? 30 : 12); });
  expect_same("5 endpoints");
  // 40 times the endpoints, with longer ids and failures: more text per record byte than before.
  for (int i = 5; i < 200; ++i) {
    set.push_back({"endpoint-with-a-longer-id-" + std::string(i % 60, 'x') + "-" +
                   std::to_string(i) + ":8080", 1 + i % 5});
  }
  h.Set(set);
  h.Drive(4, 400, [](const std::string& id) {
    return id.size() % 3 == 0 ? Outcome{7, WT_OUTCOME_HTTP_5XX} : Ok(5 + double(id.size()) / 3);
  });
  expect_same("200 endpoints");
}

// A snapshot above 32 MB is written into the block wt_free kept of the last one (its pages
// marked free, still holding the last text or read back as zeros), and is the same text.
TEST(SnapshotPieces, ALargeSnapshotWrittenIntoTheLastOnesKeptBlockIsTheSameText) {
  ReleaseTextBlock();
  Harness h;
  std::vector<std::pair<std::string, double>> set;
  for (int i = 0; i < 26000; ++i) set.push_back({"10." + std::to_string(i >> 8) + "." + std::to_string(i & 255) + ".9:8080", 1 + i % 4});
  h.Set(set);
  ASSERT_EQ(wt_engine_run_cycle(h.engine()), WT_OK);
  Engine& engine = *AsEngine(h.engine());
  const std::string want = SnapshotJson(engine);
  ASSERT_GT(want.size(), kMinTextBlock);
  char* last = nullptr;
  for (int call = 0; call < 3; ++call) {
    char* out = nullptr;
    size_t len = 0;
    ASSERT_EQ(wt_engine_snapshot_json(h.engine(), &out, &len), WT_OK);
    ASSERT_EQ(len, want.size()) << call;
    EXPECT_TRUE(std::string_view(out, len) == want) << call;
    EXPECT_EQ(out[len], '\0');
    // Sized alike from the second call on (the estimate learns the fleet's ratio on the
    // first), the third is written into the block kept of the second: it is no longer kept.
    if (call == 2) {
      EXPECT_EQ(out, last);
      size_t capacity = 0;
      EXPECT_EQ(TakeTextBlock(1, &capacity), nullptr);
    }
    last = out;
    wt_free(out);
  }
  ReleaseTextBlock();
}

// A record cut short is refused, whether it comes whole or after pieces that were fine.
TEST(SnapshotPieces, ARecordCutShortIsRefusedAfterGoodPieces) {
  Harness h;
  h.Set({{"a", 1}, {"b", 2}, {"c", 3}});
  h.Drive(3, 60, [](const std::string&) { return Ok(20); });
  std::string whole;
  ByteSink all(&whole);
  EncodeSnapshot(*AsEngine(h.engine()), all, nullptr, nullptr);
  std::string json;
  const std::string why = RenderSnapshot(std::string_view(whole).substr(0, whole.size() - 4), &json);
  EXPECT_NE(why.find("service marker cut short"), std::string::npos) << why;

  Pieces p;
  std::string record;
  ByteSink sink(&record);
  sink.OnBoundary(1, &Pieces::Feed, &p);
  EncodeSnapshot(*AsEngine(h.engine()), sink, nullptr, nullptr);
  ASSERT_EQ(p.fed, 3);
  ASSERT_EQ(record.size(), 8u);  // the end marker alone
  EXPECT_FALSE(p.renderer.Feed(std::string_view(record).substr(0, 4), true));
  EXPECT_NE(p.renderer.error().find("service marker cut short"), std::string::npos) << p.renderer.error();
}

}  // namespace
}  // namespace weighted::testing
