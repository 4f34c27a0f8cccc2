// The key table (core/src/config/keys.cc) against everything that repeats it: the Config struct,
// docs/config.schema.json and docs/config.md. A key added to one of them and forgotten in another
// fails here; the round trip and the documents as a whole are config_documents_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/keys.h"
#include "config_test_helpers.h"

namespace weighted {
namespace {

using json = nlohmann::json;
using config_keys::ConfigKeys;
using config_keys::DocumentLayout;
using config_keys::Key;
using config_keys::KeyType;
using config_keys::RuleKeys;
using config_test::Contains;
using config_test::ExpectSameConfig;
using config_test::MustParse;
using config_test::Parse;
using config_test::ReadFile;

// ---------------------------------------------------------------------------------------------
// The key table against the struct, the schema and the reference

json ValueJson(const Key& k, const Config& c) {
  const config_keys::Value v = k.field.get(c);
  if (k.type == KeyType::kEnum) return std::string(k.choices[std::get<int64_t>(v)]);
  return std::visit([](auto x) { return json(x); }, v);
}

// Converts to any type, so an aggregate's field count is the most of these it can be built from:
// the struct itself says how many fields it has, whatever they are called.
struct AnyField {
  template <typename T>
  operator T() const;  // only named in unevaluated operands
};

template <typename T, typename... Fields>
constexpr size_t FieldCount() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return FieldCount<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

size_t KeysIn(std::string_view section) {
  size_t n = 0;
  for (const Key& k : ConfigKeys()) n += k.section == section;
  return n;
}

// Keys and sections directly inside `section` (a nested section is a field of its parent).
size_t MembersOf(std::string_view section) {
  size_t n = KeysIn(section);
  for (const config_keys::Section& s : DocumentLayout().sections()) {
    if (s.name != config_keys::kRulesKey && s.name.size() > section.size() &&
        s.name.starts_with(section) && s.name[section.size()] == '/' &&
        s.name.find('/', section.size() + 1) == std::string_view::npos) {
      ++n;
    }
  }
  return n;
}

// The schema's node for a section: "/properties/a/properties/b" for "a/b".
std::string SchemaPointer(std::string_view section) {
  std::string pointer;
  size_t at = 0;
  while (at <= section.size() && !section.empty()) {
    size_t slash = section.find('/', at);
    if (slash == std::string_view::npos) slash = section.size();
    pointer += "/properties/" + std::string(section.substr(at, slash - at));
    at = slash + 1;
  }
  return pointer;
}

TEST(ConfigKeys, TableIsWellFormed) {
  std::set<std::string> paths;
  size_t in_objects = 0;
  for (const config_keys::Section& s : DocumentLayout().objects) in_objects += s.keys.size();
  EXPECT_EQ(in_objects, ConfigKeys().size()) << "a key's section is not in kSectionNames";
  for (const Key& k : ConfigKeys()) {
    SCOPED_TRACE(k.Path());
    EXPECT_TRUE(paths.insert(k.Path()).second) << "declared twice";
    EXPECT_NE(k.field.get, nullptr);
    EXPECT_NE(k.field.set, nullptr);
    EXPECT_FALSE(k.doc.empty());
    EXPECT_EQ(k.doc.find('\n'), std::string_view::npos);
    EXPECT_EQ(k.type == KeyType::kEnum, !k.choices.empty());
    if (k.type == KeyType::kInt) {  // ReadInt takes closed, integral ends
      EXPECT_FALSE(k.range.lo_open || k.range.hi_open);
      EXPECT_EQ(k.range.lo, std::floor(k.range.lo));
      EXPECT_EQ(k.range.hi, std::floor(k.range.hi));
    }
    if (k.type == KeyType::kUint64) {  // ReadUint64 reads exactly [0, 2^64)
      EXPECT_EQ(k.range.lo, 0);
      EXPECT_EQ(k.range.hi, 0x1p64);
      EXPECT_TRUE(!k.range.lo_open && k.range.hi_open);
    }
    if (k.type == KeyType::kInt || k.type == KeyType::kDouble) {
      EXPECT_LT(k.range.lo, k.range.hi);
    }
  }
  for (const Key& k : RuleKeys()) {
    EXPECT_EQ(k.field.get, nullptr) << k.name;
    EXPECT_FALSE(k.doc.empty()) << k.name;
  }
}

// A field added to Config without a line in the table would be neither read, written nor
// compared by ExpectSameConfig: count the struct's fields and the table's keys.
TEST(ConfigKeys, EveryFieldOfConfigHasAKey) {
  const std::map<std::string_view, size_t> sections = {
      {"controller", FieldCount<Config::Controller>()},
      {"window", FieldCount<Config::Window>()},
      {"isolation", FieldCount<Config::Isolation>()},
      {"guard", FieldCount<Config::Guard>()},
      {"panic", FieldCount<Config::Panic>()},
      {"slow_start", FieldCount<Config::SlowStart>()},
      {"picker", FieldCount<Config::Picker>()},
      {"budget", FieldCount<Config::Budget>()},
      {"events", FieldCount<Config::Events>()},
      {"subset", FieldCount<Config::Subset>()},
      {"load_report", FieldCount<Config::LoadReport>()},
      {"sources", FieldCount<Config::Sources>()},
      {"sources/prometheus", FieldCount<Config::Sources::Prometheus>()},
      {"sources/prometheus/queries", FieldCount<Config::Sources::Prometheus::Queries>()},
      {"limits", FieldCount<Config::Limits>()},
      {"export", FieldCount<Config::Export>()},
  };
  for (const auto& [section, fields] : sections) EXPECT_EQ(MembersOf(section), fields) << section;
  std::set<std::string_view> layout_sections;
  for (const auto& s : DocumentLayout().objects) {
    if (!s.name.empty() && s.name != config_keys::kRulesKey) layout_sections.insert(s.name);
  }
  std::set<std::string_view> struct_sections;
  for (const auto& [section, fields] : sections) struct_sections.insert(section);
  EXPECT_EQ(layout_sections, struct_sections);
  // profile and rules have code of their own; every other field is a key or a section.
  size_t top_sections = 0;
  for (const auto& [section, fields] : sections) top_sections += section.find('/') == std::string::npos;
  EXPECT_EQ(FieldCount<Config>(), 2 + KeysIn("") + top_sections);
  // Rule: metric, threshold (threshold_ms for latency metrics), relative, margin, penalty,
  // full_rate, full_penalty.
  EXPECT_EQ(FieldCount<Rule>(), 7u);
  EXPECT_EQ(RuleKeys().size(), 8u);
}

// What the schema should say of a key's range: JSON Schema's keywords, nothing for non-numbers.
json ExpectedRange(const Key& k) {
  json r = json::object();
  if (k.type == KeyType::kUint64) {
    r["minimum"] = 0;
    r["maximum"] = std::numeric_limits<uint64_t>::max();
  } else if (k.type == KeyType::kInt || k.type == KeyType::kDouble) {
    r[k.range.lo_open ? "exclusiveMinimum" : "minimum"] = k.range.lo;
    if (!std::isinf(k.range.hi)) r[k.range.hi_open ? "exclusiveMaximum" : "maximum"] = k.range.hi;
  } else if (k.type == KeyType::kString) {
    r["minLength"] = static_cast<int64_t>(k.range.lo);
    r["maxLength"] = static_cast<int64_t>(k.range.hi);
  }
  return r;
}

json SchemaRange(const json& node) {
  json r = json::object();
  for (const char* word : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                           "minLength", "maxLength"}) {
    if (node.contains(word)) r[word] = node[word];
  }
  return r;
}

void ExpectSchemaType(const json& node, const Key& k) {
  static const std::map<KeyType, const char*> kTypes = {{KeyType::kInt, "integer"},
                                                        {KeyType::kUint64, "integer"},
                                                        {KeyType::kDouble, "number"},
                                                        {KeyType::kBool, "boolean"},
                                                        {KeyType::kString, "string"}};
  if (k.type == KeyType::kEnum) {
    EXPECT_EQ(node.value("type", "string"), "string");
    ASSERT_TRUE(node.contains("enum"));
    EXPECT_EQ(node["enum"], json(std::vector<std::string>(k.choices.begin(), k.choices.end())));
  } else {
    EXPECT_EQ(node.value("type", ""), kTypes.at(k.type));
    EXPECT_FALSE(node.contains("enum"));
  }
  if (k.type == KeyType::kString) EXPECT_EQ(node.value("maxLength", -1.0), k.range.hi);
  EXPECT_EQ(SchemaRange(node), ExpectedRange(k));
  EXPECT_FALSE(node.value("description", "").empty());
}

TEST(ConfigKeys, SchemaStatesEveryKeyWithTypeRangeAndDefault) {
  const json schema = json::parse(ReadFile("docs/config.schema.json"));
  const Config defaults = DefaultConfig();
  for (const Key& k : ConfigKeys()) {
    SCOPED_TRACE(k.Path());
    const std::string pointer = SchemaPointer(k.section) + "/properties/" + std::string(k.name);
    ASSERT_TRUE(schema.contains(json::json_pointer(pointer))) << "not in the schema";
    const json& node = schema[json::json_pointer(pointer)];
    ExpectSchemaType(node, k);
    ASSERT_TRUE(node.contains("default"));
    EXPECT_EQ(node["default"], ValueJson(k, defaults));
  }
  const json& rule = schema["$defs"]["rule"]["properties"];
  for (const Key& k : RuleKeys()) {
    SCOPED_TRACE("rule " + std::string(k.name));
    ASSERT_TRUE(rule.contains(k.name)) << "not in the schema";
    ExpectSchemaType(rule[std::string(k.name)], k);
  }
}

TEST(ConfigKeys, SchemaHasNoKeyOutsideTheTable) {
  const json schema = json::parse(ReadFile("docs/config.schema.json"));
  const config_keys::Layout& layout = DocumentLayout();
  std::set<std::string> expected_top(layout.top().names.begin(), layout.top().names.end());
  std::set<std::string> top;
  for (const auto& [name, node] : schema["properties"].items()) top.insert(name);
  EXPECT_EQ(top, expected_top);
  for (const config_keys::Section& s : layout.objects) {
    if (s.name.empty()) continue;
    const json& node = s.name == config_keys::kRulesKey
                           ? schema["$defs"]["rule"]
                           : schema[json::json_pointer(SchemaPointer(s.name))];
    std::set<std::string> keys;
    for (const auto& [name, child] : node["properties"].items()) keys.insert(name);
    EXPECT_EQ(keys, std::set<std::string>(s.names.begin(), s.names.end())) << s.path;
  }
}

// docs/config.md's tables: each row's cells by its first cell (backticks dropped), between the
// headings `from` and `to`.
std::map<std::string, std::vector<std::string>> MarkdownRows(const std::string& md,
                                                             const std::string& from,
                                                             const std::string& to) {
  std::map<std::string, std::vector<std::string>> rows;
  const size_t begin = md.find(from);
  const size_t end = md.find(to, begin);
  EXPECT_NE(begin, std::string::npos) << from;
  std::istringstream in(md.substr(begin, end - begin));
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') continue;
    std::vector<std::string> cells;
    for (size_t at = 1; at < line.size();) {
      const size_t bar = line.find('|', at);
      std::string cell = line.substr(at, bar - at);
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
      at = bar + 1;
    }
    std::string key = cells[0];
    if (key.size() > 2 && key.front() == '`' && key.back() == '`') {
      key = key.substr(1, key.size() - 2);
    }
    rows[key] = cells;
  }
  return rows;
}

// A value as the reference writes it: "5000", "0.1", "`\"both\"`", "true"; enums in the profile
// table without quotes.
json MarkdownValue(std::string text, KeyType type) {
  std::erase(text, '`');
  if (type == KeyType::kEnum && text.front() != '"') text = "\"" + text + "\"";
  const json v = json::parse(text, nullptr, false);
  EXPECT_FALSE(v.is_discarded()) << "not a value: " << text;
  return v;
}

// The reference's "Range" cell: "[10, 86400000]", "(0, 1]", "> 0", possibly with a note after.
void ExpectMarkdownRange(const std::string& cell, const Key& k) {
  SCOPED_TRACE("range cell: " + cell);
  if (k.type == KeyType::kUint64) {
    EXPECT_EQ(cell, "[0, 2^64 − 1]");
  } else if (k.type == KeyType::kBool) {
    EXPECT_EQ(cell, "");
  } else if (k.type == KeyType::kString) {
    EXPECT_EQ(cell, fmt::format("{}..{} bytes", k.range.lo, k.range.hi));
  } else if (k.type == KeyType::kEnum) {
    std::string list;
    for (std::string_view c : k.choices) {
      list += (list.empty() ? "`\"" : ", `\"") + std::string(c) + "\"`";
    }
    EXPECT_EQ(cell, list);
  } else if (cell.rfind("> ", 0) == 0) {
    EXPECT_TRUE(k.range.lo_open && std::isinf(k.range.hi));
    EXPECT_EQ(MarkdownValue(cell.substr(2), k.type), json(k.range.lo));
  } else {
    ASSERT_TRUE(cell.front() == '[' || cell.front() == '(');
    const size_t comma = cell.find(", ");
    const size_t close = cell.find_first_of("])", comma);
    ASSERT_NE(close, std::string::npos);
    EXPECT_EQ(cell.front() == '(', k.range.lo_open);
    EXPECT_EQ(cell[close] == ')', k.range.hi_open);
    EXPECT_EQ(MarkdownValue(cell.substr(1, comma - 1), k.type), json(k.range.lo));
    EXPECT_EQ(MarkdownValue(cell.substr(comma + 2, close - comma - 2), k.type), json(k.range.hi));
  }
}

std::string MarkdownName(const Key& k) {
  std::string section(k.section);
  std::replace(section.begin(), section.end(), '/', '.');
  return section.empty() ? std::string(k.name) : section + "." + std::string(k.name);
}

TEST(ConfigKeys, ReferenceStatesEveryKeyWithTypeDefaultAndRange) {
  static const std::map<KeyType, const char*> kTypes = {
      {KeyType::kInt, "integer"}, {KeyType::kUint64, "integer"}, {KeyType::kDouble, "number"},
      {KeyType::kBool, "boolean"}, {KeyType::kEnum, "string"}, {KeyType::kString, "string"}};
  const std::string md = ReadFile("docs/config.md");
  const auto rows = MarkdownRows(md, "## Keys", "## Combinations that are refused");
  const Config defaults = DefaultConfig();
  const Config article = ArticleConfig();
  for (const Key& k : ConfigKeys()) {
    SCOPED_TRACE(k.Path());
    const auto row = rows.find(MarkdownName(k));
    ASSERT_TRUE(row != rows.end()) << "no row for `" << MarkdownName(k) << "` in docs/config.md";
    const std::vector<std::string>& cells = row->second;  // key, type, default, range, meaning
    ASSERT_EQ(cells.size(), 5u);
    EXPECT_EQ(cells[1], kTypes.at(k.type));
    const std::string& def = cells[2];
    const size_t note = def.find(" (article: ");
    EXPECT_EQ(MarkdownValue(def.substr(0, note), k.type), ValueJson(k, defaults));
    // The article's value is given exactly where it differs.
    if (ValueJson(k, article) != ValueJson(k, defaults)) {
      ASSERT_NE(note, std::string::npos) << "the article profile's value is missing";
      const std::string value = def.substr(note + 11, def.rfind(')') - note - 11);
      EXPECT_EQ(MarkdownValue(value, k.type), ValueJson(k, article));
    } else {
      EXPECT_EQ(note, std::string::npos);
    }
    ExpectMarkdownRange(cells[3], k);
  }
  for (const Key& k : RuleKeys()) {
    const auto row = rows.find("rules[]." + std::string(k.name));
    ASSERT_TRUE(row != rows.end()) << k.name;
    EXPECT_EQ(row->second[1], kTypes.at(k.type)) << k.name;
    if (k.type == KeyType::kDouble) ExpectMarkdownRange(row->second[3], k);
  }
  for (std::string_view metric : kMetricNames) {
    EXPECT_TRUE(Contains(md, "`" + std::string(metric) + "`"));
  }
}

// docs/config.md's profile table lists exactly the keys on which the profiles differ.
TEST(ConfigKeys, ProfileTableListsEveryDifference) {
  const std::string md = ReadFile("docs/config.md");
  auto rows = MarkdownRows(md, "## Profiles", "**Why two profiles.**");
  rows.erase("");  // the header
  rows.erase("---");
  rows.erase("everything else");
  const Config defaults = DefaultConfig();
  const Config article = ArticleConfig();
  std::set<std::string> differ;
  for (const Key& k : ConfigKeys()) {
    if (ValueJson(k, article) == ValueJson(k, defaults)) continue;
    differ.insert(MarkdownName(k));
    const auto row = rows.find(MarkdownName(k));
    ASSERT_TRUE(row != rows.end()) << MarkdownName(k) << " differs but is not in the profile table";
    const auto first_word = [](const std::string& s) { return s.substr(0, s.find(' ')); };
    EXPECT_EQ(MarkdownValue(first_word(row->second[1]), k.type), ValueJson(k, defaults));
    EXPECT_EQ(MarkdownValue(first_word(row->second[2]), k.type), ValueJson(k, article));
  }
  std::set<std::string> listed;
  for (const auto& [name, cells] : rows) listed.insert(name);
  EXPECT_EQ(listed, differ);
  EXPECT_EQ(article.rules.size(), defaults.rules.size());  // "the same rules" in both
}

// The reader applies each key's range from the table, with the message the table's range gives.
TEST(ConfigKeys, ReaderRejectsValuesOutsideEachRange) {
  for (const Key& k : ConfigKeys()) {
    SCOPED_TRACE(k.Path());
    std::vector<std::pair<json, std::string>> bad;  // value, expected message after the path
    const auto doc = [&k](const json& v) {
      json d;
      d[json::json_pointer(k.Path())] = v;
      return d.dump();
    };
    switch (k.type) {
      case KeyType::kInt: {
        const auto lo = static_cast<int64_t>(k.range.lo), hi = static_cast<int64_t>(k.range.hi);
        const std::string range = "must be an integer in [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "], got ";
        bad = {{lo - 1, range + std::to_string(lo - 1)}, {hi + 1, range + std::to_string(hi + 1)},
               {"1", "must be an integer, got string \"1\""}};
        break;
      }
      case KeyType::kUint64:
        bad = {{-1, "must be an integer in [0, 18446744073709551615], got -1"}};
        break;
      case KeyType::kDouble: {
        const json below = k.range.lo_open ? k.range.lo : k.range.lo - 1;
        bad = {{below, k.range.Describe() + ", got " + below.dump()},
               {"1", "must be a number, got string \"1\""}};
        if (!std::isinf(k.range.hi)) {
          const json above = k.range.hi_open ? k.range.hi : k.range.hi + 1;
          bad.emplace_back(above, k.range.Describe() + ", got " + above.dump());
        }
        break;
      }
      case KeyType::kBool:
        bad = {{1, "must be true or false, got 1"}};
        break;
      case KeyType::kEnum: {
        std::string list;
        for (std::string_view c : k.choices) {
          list += (list.empty() ? "\"" : ", \"") + std::string(c) + "\"";
        }
        bad = {{"nope", "must be one of " + list + ", got string \"nope\""}};
        break;
      }
      case KeyType::kString: {
        const auto lo = static_cast<size_t>(k.range.lo), hi = static_cast<size_t>(k.range.hi);
        const std::string range = fmt::format("must be {}..{} bytes long, got ", lo, hi);
        bad = {{std::string(hi + 1, 'a'), range + std::to_string(hi + 1)},
               {1, "must be a string, got 1"}};
        if (lo > 0) bad.emplace_back("", range + "0");
        break;
      }
    }
    for (const auto& [value, message] : bad) {
      const Status s = Parse(doc(value));
      EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID) << doc(value);
      EXPECT_EQ(s.message(), k.Path() + ": " + message);
    }
  }
}

// A key written at the top level is pointed to the section the table puts it in.
TEST(ConfigKeys, EveryKeyAtTheTopLevelIsPointedToItsSection) {
  for (const Key& k : ConfigKeys()) {
    if (k.section.empty()) continue;
    const Status s = Parse(json{{k.name, 1}}.dump());
    EXPECT_TRUE(Contains(s.message(), "/" + std::string(k.name) + ": unknown key; \"" +
                                          std::string(k.name) + "\" belongs in "));
    EXPECT_TRUE(Contains(s.message(), "/" + std::string(k.section)));
  }
}

}  // namespace
}  // namespace weighted
