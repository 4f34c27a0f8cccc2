// The snapshot's JSON writer: what it writes must read back, through a real JSON parser, as
// the document it was asked to write.
#include <cmath>
#include <limits>
#include <string>

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

}  // namespace
}  // namespace weighted
