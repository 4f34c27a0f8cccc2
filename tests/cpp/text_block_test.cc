// wt_free keeps the block of a large text for the next one (export/text_block.h): what it keeps,
// what it frees, and that text written into a kept block (its old bytes still there, or read
// back as zeros after MADV_FREE) is the text a fresh buffer gets.
#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "export/json_writer.h"
#include "export/text_block.h"
#include "weighted/weighted.h"

namespace weighted {
namespace {

TEST(TextBlock, WtFreeKeepsOneLargeBlockAndFreesTheRest) {
  ReleaseTextBlock();
  size_t cap = 0;
  EXPECT_EQ(TakeTextBlock(1, &cap), nullptr);
  // A small block is freed, not kept.
  wt_free(std::malloc(4096));
  EXPECT_EQ(TakeTextBlock(1, &cap), nullptr);
  wt_free(nullptr);
  // A large one is kept (its pages written first, as a text's are), and handed out once, to a
  // text that fits in it.
  char* big = static_cast<char*>(std::malloc(kMinTextBlock + 12345));
  std::memset(big, 'x', kMinTextBlock + 12345);
  wt_free(big);
  EXPECT_EQ(TakeTextBlock(kMinTextBlock * 2, &cap), nullptr);
  char* again = TakeTextBlock(kMinTextBlock, &cap);
  EXPECT_EQ(again, big);
  EXPECT_GE(cap, kMinTextBlock + 12345);
  EXPECT_EQ(TakeTextBlock(1, &cap), nullptr);
  // A second large block replaces the first (which is freed).
  wt_free(again);
  char* other = static_cast<char*>(std::malloc(kMinTextBlock + 1));
  wt_free(other);
  EXPECT_EQ(TakeTextBlock(1, &cap), other);
  std::free(other);
  ReleaseTextBlock();
}

TEST(TextBlock, TextWrittenIntoAKeptBlockIsTheTextOfAFreshOne) {
  const auto write = [](JsonWriter& w) {
    w.BeginArray();
    for (int i = 0; i < 3000; ++i) {
      w.BeginObject().Key("id").String("10.0.0." + std::to_string(i)).Key("w").Double(i / 9.0);
      w.Key("n").Uint(uint64_t(i) * 977).EndObject();
    }
    w.EndArray();
  };
  JsonWriter fresh;
  write(fresh);
  const std::string want = fresh.Take();
  ReleaseTextBlock();
  char* big = static_cast<char*>(std::malloc(kMinTextBlock));
  std::memset(big, '{', kMinTextBlock);  // what a last text left there
  wt_free(big);                          // its pages marked free: kept bytes or zeros
  size_t cap = 0;
  char* block = TakeTextBlock(kMinTextBlock, &cap);
  ASSERT_EQ(block, big);
  JsonWriter w(JsonWriter::Malloced{kMinTextBlock, block, cap});
  write(w);
  size_t len = 0;
  char* text = w.TakeMalloced(&len);
  EXPECT_EQ(text, big);  // written in place
  EXPECT_EQ(std::string_view(text, len), want);
  EXPECT_EQ(text[len], '\0');
  wt_free(text);
  ReleaseTextBlock();
}

}  // namespace
}  // namespace weighted
