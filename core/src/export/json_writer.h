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

#include <fmt/compile.h>
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

  // The next value belongs to `key` (inside an object). A literal key is the code's own and
  // needs no escape: appended without the scan (a snapshot has ~90 keys per endpoint).
  template <size_t N>
  JsonWriter& Key(const char (&key)[N]) {
    Separate();
    out_ += '"';
    out_.append(key, N - 1);
    out_.append("\":", 2);
    after_key_ = true;
    return *this;
  }
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
  // Numbers are formatted into a buffer on the stack and appended at once: through a
  // back_inserter, fmt appends character by character, and a snapshot of 1 000 endpoints has
  // some 40 000 numbers.
  JsonWriter& Int(int64_t v) { return Number(v); }
  JsonWriter& Uint(uint64_t v) { return Number(v); }
  JsonWriter& Double(double v) {
    if (!std::isfinite(v)) return Null();
    Separate();
    char buf[40];
    // A compiled format: the same text as "{}" without parsing the format string per number.
    char* end = fmt::format_to(buf, FMT_COMPILE("{}"), v);
    out_.append(buf, end);
    if (std::string_view(buf, size_t(end - buf)).find_first_of(".e") == std::string_view::npos) {
      out_ += ".0";
    }
    return *this;
  }

  // A value that is JSON already (an event's reason, made by the engine).
  JsonWriter& Json(std::string_view json) { return Raw(json); }

  void Reserve(size_t bytes) { out_.reserve(bytes); }
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
  template <typename T>
  JsonWriter& Number(T v) {
    Separate();
    char buf[24];
    out_.append(buf, fmt::format_to(buf, FMT_COMPILE("{}"), v));
    return *this;
  }
  // Strings here are valid UTF-8 (ids and names are checked on the way in), so only quotes,
  // backslashes and control characters need escapes.
  static bool NeedsEscape(unsigned char c) { return c == '"' || c == '\\' || c < 0x20; }
  void Quoted(std::string_view s) {
    out_ += '"';
    // Runs without an escape (all of an id or a key, as a rule) are appended at once.
    size_t run = 0;
    while (run < s.size() && !NeedsEscape(static_cast<unsigned char>(s[run]))) ++run;
    if (run == s.size()) {
      out_.append(s);
      out_ += '"';
      return;
    }
    out_.append(s.substr(0, run));
    for (unsigned char c : s.substr(run)) {
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
