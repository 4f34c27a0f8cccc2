// The config's keys, each declared once: its place in the document, type, range, where it lives
// in Config and what it means. The reader, the writer, the unknown-key hints and the drift test
// against docs/config.schema.json and docs/config.md are all derived from this table, so a key
// cannot be known to one of them and missing from another.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "config/config.h"
#include "config/config_reader.h"

namespace weighted::config_keys {

using config_reader::Range;

enum class KeyType : uint8_t {
  kInt,     // an integer in a closed range (integral floats such as 5000.0 count)
  kUint64,  // any integer in [0, 2^64 - 1]
  kDouble,  // a finite number in `range`
  kBool,
  kEnum,    // one of `choices`, stored as the enum whose value is the choice's index
  kString,  // UTF-8 text of range.lo..range.hi bytes, further checked by `check` when it has one
};

// A key's value on its way between a document and a Config. One alternative per kind of storage:
// enums travel as their index, unsigned 64-bit fields as uint64_t, other integers as int64_t.
using Value = std::variant<int64_t, uint64_t, double, bool, std::string>;

// Reads and writes one field of a Config; made by FieldAt from member pointers.
struct Field {
  Value (*get)(const Config&);
  void (*set)(Config&, Value);
};

struct Key {
  std::string_view section;  // "" at the top level
  std::string_view name;
  KeyType type;
  Range range;                                // numbers only
  std::span<const std::string_view> choices;  // kEnum only: the JSON spellings, by enum value
  Field field;
  std::string_view doc;  // one line; the schema's and docs/config.md's wording may be longer
  // kString only, may be null: why a string of the right length is still refused ("" if it is
  // fine). The schema states the same rule as a "pattern".
  std::string_view (*check)(std::string_view) = nullptr;

  // The JSON pointer: "/controller/interval_ms". `section` is itself a pointer without its
  // leading "/" ("sources/prometheus"): sections may nest.
  std::string Path() const;
};

// The simple keys in document order (the order ConfigToJson writes them).
std::span<const Key> ConfigKeys();
// The keys of one rule object. They have no field of their own (a rule's kind decides which of
// them apply and how), so `field` is empty; the range is the one the rule reader applies.
std::span<const Key> RuleKeys();
// The rule key named `name`; `name` must be one of RuleKeys().
const Key& RuleKey(std::string_view name);

// The names under which keys that are not simple appear.
inline constexpr std::string_view kSchemaKey = "$schema";
inline constexpr std::string_view kProfileKey = "profile";
inline constexpr std::string_view kRulesKey = "rules";

// One object of the document: the top level, a section, or a rule (path "/rules/N").
struct Section {
  std::string_view name;                // "" for the top level; "sources/prometheus" nested
  std::string path;                     // its JSON pointer, "N" for any array index
  std::vector<std::string_view> names;  // every key it may hold, for ExpectObject and the hints
  std::vector<const Key*> keys;         // its simple keys, in document order
  // The part of `name` after its parent's ("prometheus"), and the parent's index in
  // Layout::objects (0, the top level, for a top-level section).
  std::string_view leaf;
  size_t parent = 0;
};

// The document's objects derived from the tables: top level first, then the sections in
// document order with the rule objects in the place of "rules", each nested section right after
// its parent. Built once, never changed.
struct Layout {
  Layout() = default;
  Layout(Layout&&) = default;
  Layout(const Layout&) = delete;  // a copy's key_map would still view the original's names

  std::vector<Section> objects;
  std::vector<std::pair<std::string_view, config_reader::Keys>> key_map;  // for Node's hints
  const Section& top() const { return objects.front(); }
  std::span<const Section> sections() const { return std::span(objects).subspan(1); }
};
const Layout& DocumentLayout();

// ---------------------------------------------------------------------------------------------
// Building blocks of the tables (keys.cc), public so the tests can use them on any Config.

template <typename T>
Value ToValue(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<int64_t>(v);
  } else if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) {
    return v;
  } else if constexpr (std::is_unsigned_v<T> && sizeof(T) == sizeof(uint64_t)) {
    return static_cast<uint64_t>(v);
  } else {
    return static_cast<int64_t>(v);
  }
}

// The reader has checked the value against the key's range, so the cast cannot narrow.
template <typename T>
T FromValue(Value v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::get<std::string>(std::move(v));
  } else {
    return std::visit(
        [](auto x) -> T {
          if constexpr (std::is_same_v<decltype(x), std::string>) return T{};  // never: typed
          else return static_cast<T>(x);
        },
        v);
  }
}

// The field reached from Config through `kPath` (one member pointer at the top level, two in a
// section: &Config::controller, &Config::Controller::interval_ms).
template <auto... kPath>
constexpr Field FieldAt() {
  return {[](const Config& c) { return ToValue((c .* ... .* kPath)); },
          [](Config& c, Value v) {
            auto& field = (c .* ... .* kPath);
            field = FromValue<std::remove_reference_t<decltype(field)>>(v);
          }};
}

}  // namespace weighted::config_keys
