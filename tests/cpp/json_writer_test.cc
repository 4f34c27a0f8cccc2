// The snapshot's JSON writer: what it writes must read back, through a real JSON parser, as
// the document it was asked to write.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "export/json_writer.h"

namespace weighted {
namespace {

using nlohmann::json;

TEST(JsonWriter, NestedContainersReadBackAsWritten) {
  JsonWriter w;
  w.BeginObject().Key("a").BeginArray();
  w.Uint(1).Int(-2).Bool(true).Null();
  w.BeginObject().EndObject().BeginArray().EndArray();
  w.EndArray().Key("b").BeginObject().Key("c").String("d").EndObject();
  w.Key("e").Uint(18446744073709551615ull).EndObject();
  const json doc = json::parse(w.Take());
  EXPECT_EQ(doc, json::parse(R"({"a": [1, -2, true, null, {}, []], "b": {"c": "d"},
                                 "e": 18446744073709551615})"));
}

TEST(JsonWriter, StringsAreEscaped) {
  const std::string nasty = "q\"b\\s/n\nr\rt\tc\x01\x1f utf8 \xc3\xa9 \xe2\x82\xac";
  JsonWriter w;
  w.BeginObject().Key(nasty).String(nasty).EndObject();
  const json doc = json::parse(w.Take());
  ASSERT_TRUE(doc.contains(nasty));
  EXPECT_EQ(doc[nasty].get<std::string>(), nasty);
}

TEST(JsonWriter, DoublesRoundTripAndStayDoubles) {
  for (double v : {0.0, 1.0, 100.0, -3.0, 0.1, 1.0 / 3.0, 1e-300, 1e300, 123456789.125,
                   std::numeric_limits<double>::denorm_min()}) {
    JsonWriter w;
    w.BeginArray().Double(v).EndArray();
    const std::string text = w.Take();
    const json doc = json::parse(text);
    ASSERT_TRUE(doc[0].is_number_float()) << text;
    EXPECT_EQ(doc[0].get<double>(), v) << text;
  }
}

TEST(JsonWriter, NonFiniteDoublesAreNull) {
  JsonWriter w;
  w.BeginArray().Double(std::nan("")).Double(std::numeric_limits<double>::infinity()).EndArray();
  EXPECT_EQ(w.Take(), "[null,null]");
}

// Plain runs are scanned eight bytes at a time: an escape at any offset, after any run, and
// UTF-8 beside it, still comes out escaped and reads back.
TEST(JsonWriter, EscapesAtEveryOffsetOfALongString) {
  for (char special : {'"', '\\', '\n', '\x01', '\x1f'}) {
    for (size_t at = 0; at < 20; ++at) {
      std::string s = std::string(at, 'a') + "\xc3\xa9" + std::string(at % 3, 'b');
      s.insert(at, 1, special);
      s += std::string(9, 'z');
      JsonWriter w;
      w.BeginArray().String(s).EndArray();
      const json doc = json::parse(w.Take());
      EXPECT_EQ(doc[0].get<std::string>(), s) << int(special) << " at " << at;
    }
  }
}

// Whole doubles take a shortcut past fmt's shortest-form search: the text must be fmt's own.
TEST(JsonWriter, WholeDoublesWriteFmtsShortestText) {
  std::vector<double> values = {0.0, -0.0, 1.0, -1.0, 7.0, 10.0, 100.0, 65536.0, 1e14,
                                999999999999999.0, -999999999999999.0, 1e15, 1e16, 2e300};
  for (int e = 0; e < 50; ++e) values.push_back(std::ldexp(1.0, e));
  for (double v : values) {
    std::string want = fmt::format("{}", v);
    if (want.find_first_of(".e") == std::string::npos) want += ".0";
    JsonWriter w;
    w.BeginArray().Double(v).EndArray();
    EXPECT_EQ(w.Take(), "[" + want + "]") << v;
  }
}

// The writer grows its buffer ahead of the text: a long document, from a reused buffer or a
// fresh one, reads back whole.
TEST(JsonWriter, LongDocumentsFromReusedBuffersReadBackWhole) {
  std::string buffer;
  for (int round = 0; round < 2; ++round) {
    JsonWriter w(std::move(buffer));
    w.BeginArray();
    for (int i = 0; i < 20000; ++i) {
      w.BeginObject().Key("i").Int(i).Key(std::string(i % 7, 'k')).Double(i * 0.5);
      w.Key("s").String(std::string(i % 300, i % 2 ? '"' : 'x')).EndObject();
    }
    w.EndArray();
    buffer = w.Take();
    const json doc = json::parse(buffer);
    ASSERT_EQ(doc.size(), 20000u);
    EXPECT_EQ(doc[12345]["i"], 12345);
    EXPECT_EQ(doc[12345]["s"].get<std::string>(), std::string(12345 % 300, '"'));
    EXPECT_EQ(doc[777][std::string(777 % 7, 'k')].get<double>(), 388.5);
  }
}

// Fractions go through a memo of the texts last written (after the first 64): a value written
// again, one that shares its slot with another (a few hundred values over 512 slots collide),
// and one that replaced another in its slot all come out as fmt writes them.
TEST(JsonWriter, RepeatedFractionsWriteFmtsShortestText) {
  std::vector<double> values;
  for (int i = 1; i <= 700; ++i) values.push_back(i / 7.0);
  for (int i = 1; i <= 50; ++i) values.push_back(-std::ldexp(1.0, -i) * 3);
  values.push_back(1e-300 / 3);
  values.push_back(1.5e17 + 2);  // a whole number fmt writes with an exponent
  values.push_back(-0.1);
  std::string want = "[";
  JsonWriter w;
  w.BeginArray();
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < values.size(); ++i) {
      // Each round in another order, so that values evict each other differently.
      const double v = values[(i * (round * 2 + 1)) % values.size()];
      std::string text = fmt::format("{}", v);
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      want += (want.size() > 1 ? "," : "") + text;
      w.Double(v);
    }
  }
  w.EndArray();
  EXPECT_EQ(w.Take(), want + "]");
}

// A writer into malloc'ed memory (the C ABI's snapshot) writes the text a string writer does,
// however small its first reservation (it grows by reallocation as it writes), and hands it
// out NUL-terminated, with its length.
TEST(JsonWriter, MallocedWritersWriteTheTextOfStringWriters) {
  const auto write = [](JsonWriter& w) {
    w.BeginArray();
    for (int i = 0; i < 5000; ++i) {
      w.BeginObject().Key("i").Int(i).Key(std::string(i % 7, 'k')).Double(i / 3.0);
      w.Key("s").String(std::string(i % 90, i % 2 ? '\n' : 'x')).Key("n").Null().EndObject();
    }
    w.EndArray();
  };
  JsonWriter plain;
  write(plain);
  const std::string want = plain.Take();
  for (size_t reserve : {size_t{0}, size_t{100}, want.size(), want.size() + 1, size_t{1} << 22}) {
    JsonWriter w(JsonWriter::Malloced{reserve});
    write(w);
    size_t len = 0;
    char* text = w.TakeMalloced(&len);
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(len, want.size()) << reserve;
    EXPECT_EQ(text[len], '\0') << reserve;
    EXPECT_EQ(std::string_view(text, len), want) << reserve;
    std::free(text);
  }
  // Take() copies a malloced writer's text out, and the writer writes on from empty.
  JsonWriter w(JsonWriter::Malloced{16});
  w.BeginArray().Uint(1).EndArray();
  EXPECT_EQ(w.Take(), "[1]");
  w.BeginArray().Uint(2).EndArray();
  size_t len = 0;
  char* text = w.TakeMalloced(&len);
  EXPECT_EQ(std::string_view(text, len), "[2]");
  std::free(text);
}

// The code's own names are written without the escape scan, as String and Key write them.
TEST(JsonWriter, CodeNamesAreWrittenAsStringsAre) {
  JsonWriter a, b;
  a.BeginObject().CodeKey("healthy").CodeString("p99_ms").Key("x").CodeString("").EndObject();
  b.BeginObject().Key(std::string_view("healthy")).String("p99_ms").Key("x").String("").EndObject();
  const std::string text = a.Take();
  EXPECT_EQ(text, b.Take());
  EXPECT_EQ(text, R"({"healthy":"p99_ms","x":""})");
}

}  // namespace
}  // namespace weighted
