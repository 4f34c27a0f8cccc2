// Shared by the config tests (config_test.cc, config_keys_test.cc): parsing shortcuts, the
// comparison of two configs, and reading the documents of the source tree.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "config/keys.h"

namespace weighted::config_test {

// Prints both strings on failure (gmock's HasSubstr without linking gmock).
inline ::testing::AssertionResult Contains(const std::string& haystack,
                                           const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n  \"" << haystack << "\"\ndoes not contain\n  \""
                                       << needle << "\"";
}

// Key by key from the table, so that a key added there is compared here without a line of its
// own (config_keys_test.cc checks that every field of Config has a key in the table).
inline void ExpectSameConfig(const Config& a, const Config& b) {
  EXPECT_EQ(a.profile, b.profile);
  for (const config_keys::Key& k : config_keys::ConfigKeys()) {
    EXPECT_EQ(k.field.get(a), k.field.get(b)) << k.Path();
  }
  ASSERT_EQ(a.rules.size(), b.rules.size());
  for (size_t i = 0; i < a.rules.size(); ++i) {
    SCOPED_TRACE("rule " + std::to_string(i));
    EXPECT_EQ(a.rules[i].metric, b.rules[i].metric);
    EXPECT_EQ(a.rules[i].threshold, b.rules[i].threshold);
    EXPECT_EQ(a.rules[i].relative, b.rules[i].relative);
    EXPECT_EQ(a.rules[i].margin, b.rules[i].margin);
    EXPECT_EQ(a.rules[i].penalty, b.rules[i].penalty);
  }
  EXPECT_EQ(ConfigToJson(a), ConfigToJson(b));
}

inline Config MustParse(const std::string& text) {
  Config c;
  const Status s = ParseConfig(text, &c);
  EXPECT_TRUE(s.ok()) << s.message() << "\nin: " << text;
  return c;
}

inline Status Parse(const std::string& text) {
  Config c;
  return ParseConfig(text, &c);
}

// WT_SOURCE_DIR may be defined as a string literal or as bare tokens; accept both. Without it
// (or if it is wrong), walk up from the working directory, which works from any build folder.
inline std::filesystem::path SourceDir() {
#define WT_STRINGIFY_INNER(x) #x
#define WT_STRINGIFY(x) WT_STRINGIFY_INNER(x)
#ifdef WT_SOURCE_DIR
  std::string defined = WT_STRINGIFY(WT_SOURCE_DIR);
  if (defined.size() >= 2 && defined.front() == '"' && defined.back() == '"') {
    defined = defined.substr(1, defined.size() - 2);
  }
  if (std::filesystem::exists(std::filesystem::path(defined) / "docs/config.schema.json")) {
    return defined;
  }
#endif
  for (auto dir = std::filesystem::current_path(); !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "docs/config.schema.json")) return dir;
    if (dir == dir.parent_path()) break;
  }
  return ".";
}

inline std::string ReadFile(const std::string& relative) {
  const auto path = SourceDir() / relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace weighted::config_test
