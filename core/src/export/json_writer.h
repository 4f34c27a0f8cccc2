// A JSON text writer for the engine's snapshot. Building the snapshot as a nlohmann DOM cost
// ~50 us of CPU per endpoint (a std::map and a dozen allocations per object; 540 ms for 10 000
// endpoints, for a dashboard that polls every second); writing the text straight into one
// string costs a few microseconds. The output is the same JSON: numbers in the shortest form
// that reads back exactly, doubles always with a fraction or exponent (as nlohmann writes them,
// so a reader that types 1.0 and 1 apart sees no change), non-finite doubles as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace weighted {

class JsonWriter {
 public:
  JsonWriter() = default;
  // Writes into `buffer`, emptied first: a caller that writes the same large text again and
  // again hands back the last one's buffer and keeps its capacity (no allocation, no page
  // faults on fresh memory).
  explicit JsonWriter(std::string buffer) : out_(std::move(buffer)) { out_.clear(); }

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }

  // The next value belongs to `key` (inside an object).
  JsonWriter& Key(std::string_view key) {
    Separate();
    Quoted(key);
    out_ += ':';
    after_key_ = true;
    return *this;
  }

  JsonWriter& String(std::string_view s) {
    Separate();
    Quoted(s);
    return *this;
  }
  JsonWriter& Bool(bool b) { return Raw(b ? "true" : "false"); }
  JsonWriter& Null() { return Raw("null"); }
  JsonWriter& Int(int64_t v) {
    Separate();
    fmt::format_to(std::back_inserter(out_), "{}", v);
    return *this;
  }
  JsonWriter& Uint(uint64_t v) {
    Separate();
    fmt::format_to(std::back_inserter(out_), "{}", v);
    return *this;
  }
  JsonWriter& Double(double v) {
    if (!std::isfinite(v)) return Null();
    Separate();
    const size_t start = out_.size();
    fmt::format_to(std::back_inserter(out_), "{}", v);
    if (out_.find_first_of(".e", start) == std::string::npos) out_ += ".0";
    return *this;
  }

  // A value that is JSON already (an event's reason, made by the engine).
  JsonWriter& Json(std::string_view json) { return Raw(json); }

  std::string Take() { return std::move(out_); }

 private:
  JsonWriter& Open(char c) {
    Separate();
    out_ += c;
    first_ = true;
    return *this;
  }
  JsonWriter& Close(char c) {
    out_ += c;
    first_ = false;
    return *this;
  }
  JsonWriter& Raw(std::string_view text) {
    Separate();
    out_ += text;
    return *this;
  }
  // A comma before every element but the first of its container, and none after a key.
  void Separate() {
    if (after_key_) {
      after_key_ = false;
    } else if (!first_) {
      out_ += ',';
    }
    first_ = false;
  }
  // Strings here are valid UTF-8 (ids and names are checked on the way in), so only quotes,
  // backslashes and control characters need escapes.
  void Quoted(std::string_view s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) fmt::format_to(std::back_inserter(out_), "\\u{:04x}", c);
          else out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
  }

  std::string out_;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace weighted
