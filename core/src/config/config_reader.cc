// GCC 12-14 report a false -Warray-bounds inside nlohmann's JSON_DIAGNOSTICS bookkeeping when
// the callback parser below is inlined (nlohmann/json#3808, fixed in GCC 15). The warning is
// about library code, so it is silenced for the library's lines only: the pragma region covers
// the include, and warnings are judged at the line they point to.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include "config/config_reader.h"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace weighted::config_reader {

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// A key written at the wrong level names where it belongs; a typo names the nearest key here;
// otherwise the message lists what is allowed here. An exact key elsewhere beats a near one here
// ("window_ms" at the top is slow_start's, not a misspelt "window").
std::string UnknownKeyHint(std::string_view key, Keys known, KeyMap key_map) {
  std::string homes;
  for (const auto& [section, keys] : key_map) {
    if (keys.data() != known.data() && std::find(keys.begin(), keys.end(), key) != keys.end()) {
      homes += homes.empty() ? "" : " or ";
      homes += section.empty() ? "the top level" : section;
    }
  }
  if (!homes.empty()) return fmt::format("; \"{}\" belongs in {}", key, homes);
  std::string_view best;
  size_t best_distance = std::max<size_t>(2, key.size() / 3) + 1;
  for (std::string_view k : known) {
    const size_t d = EditDistance(key, k);
    if (d < best_distance) best = k, best_distance = d;
  }
  if (!best.empty()) return fmt::format("; did you mean \"{}\"?", best);
  std::string list;
  for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  return fmt::format(" (expected one of: {})", list);
}

// 1-based line and column of a byte offset. Columns count characters (UTF-8 code points), as
// editors do, not bytes.
std::pair<size_t, size_t> LineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (ch == '\n') {
      ++line;
      column = 1;
    } else if ((ch & 0xC0) != 0x80) {
      ++column;
    }
  }
  return {line, column};
}

// nlohmann reports a number too large for a double (1e400) without a position; find the token
// outside string literals.
size_t FindNumberToken(std::string_view text, std::string_view token) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      if (text[i] == '\\') ++i;
      else if (text[i] == '"') in_string = false;
    } else if (text[i] == '"') {
      in_string = true;
    } else if (text.substr(i, token.size()) == token) {
      return i;
    }
  }
  return text.size();
}

[[noreturn]] void SyntaxError(std::string_view text, size_t offset, std::string detail) {
  const auto [line, column] = LineColumn(text, offset);
  if (detail.find("invalid literal") != std::string::npos &&
      detail.find("expected") == std::string::npos) {
    detail += "; expected a string in double quotes, a number, true, false, null, an object or "
              "an array";
  }
  throw ConfigReadError{
      WT_ERR_CONFIG_PARSE, "",
      fmt::format("config is not valid JSON: line {}, column {}: {}", line, column, detail)};
}

// Follows the parser's events to know the path of the first key repeated within one object.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        EnterValue();
        frames_.push_back({event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.seen.insert(f.key).second && !duplicate_) duplicate_ = Path();
        break;
      }
      case json::parse_event_t::value:
        EnterValue();
        break;
    }
    return true;
  }
  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool array;
    size_t next_index;  // arrays: one past the index of the element being read
    std::string key;    // objects: the key being read
    std::set<std::string> seen;
  };
  void EnterValue() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next_index;
  }
  std::string Path() const {
    std::string path;
    for (const Frame& f : frames_) {
      path += "/" + (f.array ? std::to_string(f.next_index - 1) : PointerToken(f.key));
    }
    return path;
  }

  std::vector<Frame> frames_;
  std::optional<std::string> duplicate_;
};

}  // namespace

json ParseDocument(std::string_view text) {
  // JSON text has no NUL; a parser would stop there and ignore the rest (whatever it says).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    SyntaxError(text, nul, fmt::format("a NUL byte at offset {}; the document must be text up to "
                                       "its length", nul));
  }
  DuplicateKeyFinder duplicates;
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), std::ref(duplicates));
  } catch (const json::parse_error& e) {
    // nlohmann's text already says what was expected; keep it, minus its own position prefix
    // (which counts bytes, not characters). e.byte is 1-based: the last character read.
    std::string detail = e.what();
    const size_t column = detail.find("column ");
    const size_t colon = column == std::string::npos ? column : detail.find(": ", column);
    if (colon != std::string::npos) detail.erase(0, colon + 2);
    SyntaxError(text, e.byte == 0 ? 0 : e.byte - 1, detail);
  } catch (const json::out_of_range& e) {  // "number overflow parsing '1e400'"
    const std::string what = e.what();
    const size_t open = what.find('\'');
    const size_t close = what.rfind('\'');
    const std::string token =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    SyntaxError(text, FindNumberToken(text, token),
                fmt::format("number {} is too large for a double", token));
  }
  if (duplicates.duplicate()) {
    throw ConfigReadError{WT_ERR_CONFIG_INVALID, *duplicates.duplicate(),
                          "duplicate key (JSON parsers keep only one of the two values)"};
  }
  return doc;
}

std::string PointerToken(std::string_view key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~') out += "~0";
    else if (ch == '/') out += "~1";
    else out += ch;
  }
  return out;
}

std::string Show(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string text = v.dump();
  if (text.size() > 60) {
    size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  if (v.is_string()) return "string " + text;
  if (v.is_boolean()) return "boolean " + text;
  return text;
}

void Node::ExpectObject(Keys known) const {
  if (!v_->is_object()) Fail(fmt::format("must be an object, got {}", Show(*v_)));
  for (const auto& [key, value] : v_->items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      Node(value, path_ + "/" + PointerToken(key), key_map_)
          .Fail("unknown key" + UnknownKeyHint(key, known, key_map_));
    }
  }
}

std::optional<Node> Node::Get(std::string_view key) const {
  const auto it = v_->find(std::string(key));
  if (it == v_->end()) return std::nullopt;
  return Node(*it, path_ + "/" + PointerToken(key), key_map_);
}

Node Node::Required(std::string_view key, std::string_view what) const {
  auto child = Get(key);
  if (!child) Fail(fmt::format("missing \"{}\" ({})", key, what));
  return *child;
}

std::string Range::Describe() const {
  if (std::isinf(hi)) return fmt::format("must be {} {}", lo_open ? ">" : ">=", lo);
  return fmt::format("must be in {}{}, {}{}", lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
}

double ReadDouble(const Node& n, Range range) {
  if (!n.v().is_number()) n.Fail(fmt::format("must be a number, got {}", Show(n.v())));
  const double d = n.v().get<double>();
  if (!std::isfinite(d) || !range.Contains(d)) {
    n.Fail(fmt::format("{}, got {}", range.Describe(), Show(n.v())));
  }
  return d;
}

// Python's json module writes 5000.0 for a float that happens to be whole; rejecting it would
// punish configs generated by scripts for no safety gain.
int64_t ReadInt(const Node& n, int64_t lo, int64_t hi) {
  const json& v = n.v();
  const auto out_of_range = [&] {
    n.Fail(fmt::format("must be an integer in [{}, {}], got {}", lo, hi, Show(v)));
  };
  if (!v.is_number()) n.Fail(fmt::format("must be an integer, got {}", Show(v)));
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d != std::floor(d)) n.Fail(fmt::format("must be an integer, got {}", Show(v)));
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) out_of_range();
    return static_cast<int64_t>(d);
  }
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi) || static_cast<int64_t>(u) < lo) out_of_range();
    return static_cast<int64_t>(u);
  }
  const int64_t i = v.get<int64_t>();
  if (i < lo || i > hi) out_of_range();
  return i;
}

uint64_t ReadUint64(const Node& n) {
  const json& v = n.v();
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && d >= 0 && d < 18446744073709551616.0) return static_cast<uint64_t>(d);
  }
  n.Fail(fmt::format("must be an integer in [0, 18446744073709551615], got {}", Show(v)));
}

size_t ReadChoice(const Node& n, std::span<const std::string_view> names) {
  if (n.v().is_string()) {
    const auto& s = n.v().get_ref<const std::string&>();
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == s) return i;
    }
  }
  std::string list;
  for (std::string_view name : names) {
    list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", name);
  }
  n.Fail(fmt::format("must be one of {}, got {}", list, Show(n.v())));
}

bool ReadBool(const Node& n) {
  if (!n.v().is_boolean()) n.Fail(fmt::format("must be true or false, got {}", Show(n.v())));
  return n.v().get<bool>();
}

std::string ReadString(const Node& n, size_t min_bytes, size_t max_bytes) {
  if (!n.v().is_string()) n.Fail(fmt::format("must be a string, got {}", Show(n.v())));
  const auto& s = n.v().get_ref<const std::string&>();
  if (s.size() < min_bytes || s.size() > max_bytes) {
    n.Fail(fmt::format("must be {}..{} bytes long, got {}", min_bytes, max_bytes, s.size()));
  }
  // nlohmann's parser has checked the UTF-8 already; a NUL would cut the text short in C.
  if (s.find('\0') != std::string::npos) n.Fail("must not hold a NUL character");
  return s;
}

}  // namespace weighted::config_reader
