// Reading a JSON document with errors that say where: a line and column while the text is not
// JSON yet, a JSON pointer (RFC 6901) once it is. Internal to the config parser (config_json.cc);
// errors travel as a thrown ConfigReadError that ParseConfig turns into a Status, so no
// exception leaves the config code.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/status.h"

namespace weighted::config_reader {

using json = nlohmann::json;

struct ConfigReadError {
  wt_status code;
  std::string path;  // JSON pointer; empty for the whole document or for a syntax error
  std::string message;
};

// Parses JSON text. Syntax errors (WT_ERR_CONFIG_PARSE) give line and column; a key repeated in
// one object (WT_ERR_CONFIG_INVALID) gives its path, because JSON parsers silently keep only one
// of the two values.
json ParseDocument(std::string_view text);

// "~" and "/" escaped as in RFC 6901.
std::string PointerToken(std::string_view key);
// A value as quoted in a message: numbers bare, others with their type ("string \"5000\"").
std::string Show(const json& v);

using Keys = std::span<const std::string_view>;
// Every object's path (a JSON pointer, "N" for any array index) with its keys, so that a key
// written at the wrong level can be pointed to the right one.
using KeyMap = std::span<const std::pair<std::string_view, Keys>>;

// A value in the parsed tree with its JSON pointer.
class Node {
 public:
  Node(const json& v, std::string path, KeyMap key_map)
      : v_(&v), path_(std::move(path)), key_map_(key_map) {}
  const json& v() const { return *v_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void Fail(std::string message) const {
    throw ConfigReadError{WT_ERR_CONFIG_INVALID, path_, std::move(message)};
  }
  // Fails unless this is an object whose keys are all in `known`.
  void ExpectObject(Keys known) const;
  // The member `key`, if present.
  std::optional<Node> Get(std::string_view key) const;
  // The member `key`; fails naming `what` it is for if absent.
  Node Required(std::string_view key, std::string_view what) const;
  // Element i of an array.
  Node At(size_t i) const { return Node(v_->at(i), fmt::format("{}/{}", path_, i), key_map_); }

 private:
  const json* v_;
  std::string path_;
  KeyMap key_map_;
};

// A closed, open or half-open interval; an infinite `hi` means no upper bound.
struct Range {
  double lo;
  double hi;
  bool lo_open = false;
  bool hi_open = false;

  bool Contains(double d) const {
    return (lo_open ? d > lo : d >= lo) && (hi_open ? d < hi : d <= hi);
  }
  std::string Describe() const;
};
inline constexpr double kNoUpperBound = HUGE_VAL;
inline constexpr Range kFraction{0, 1};
inline constexpr Range kPositiveFraction{0, 1, true, false};

double ReadDouble(const Node& n, Range range);
// An integer in [lo, hi]. Integral floats (5000.0) count, as in JSON Schema; 1.5 does not.
int64_t ReadInt(const Node& n, int64_t lo, int64_t hi);
uint64_t ReadUint64(const Node& n);
bool ReadBool(const Node& n);
// A string of min_bytes..max_bytes bytes without NUL.
std::string ReadString(const Node& n, size_t min_bytes, size_t max_bytes);

// The index in `names` of a string value; else fails listing them.
size_t ReadChoice(const Node& n, std::span<const std::string_view> names);

}  // namespace weighted::config_reader
