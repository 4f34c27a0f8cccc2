#include "stats/load_report.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/quoted.h"

namespace weighted {

namespace {

constexpr std::string_view kText = "TEXT ";
constexpr std::string_view kJson = "JSON ";
constexpr std::string_view kBin = "BIN ";

// The OrcaLoadReport fields, by what they feed. Each has its proto name (the TEXT spelling and
// proto JSON's "preserved" one) and proto3 JSON's lowerCamelCase name.
enum class Field : uint8_t {
  kCpu, kMemory, kApplication, kRpsFractional, kRps, kEps,  // scalars
  kNamed, kUtilization, kRequestCost,                         // maps
  kUnknown,
};
struct FieldName {
  std::string_view proto, camel;
  Field field;
};
constexpr FieldName kFields[] = {
    {"cpu_utilization", "cpuUtilization", Field::kCpu},
    {"mem_utilization", "memUtilization", Field::kMemory},
    {"application_utilization", "applicationUtilization", Field::kApplication},
    {"rps_fractional", "rpsFractional", Field::kRpsFractional},
    {"rps", "rps", Field::kRps},
    {"eps", "eps", Field::kEps},
    {"named_metrics", "namedMetrics", Field::kNamed},
    {"utilization", "utilization", Field::kUtilization},
    {"request_cost", "requestCost", Field::kRequestCost},
};

Field FieldOf(std::string_view name) {
  for (const FieldName& f : kFields) {
    if (name == f.proto || name == f.camel) return f.field;
  }
  return Field::kUnknown;
}

bool IsMap(Field f) { return f == Field::kNamed || f == Field::kUtilization || f == Field::kRequestCost; }

// What one parse has seen so far, and the report it builds. A field is remembered by a bit, a
// map entry by its name: a view into the header (TEXT), or into a copy kept in `arena_` (a JSON
// key does not outlive its callback; the keys together are never longer than the header), so a
// duplicate is found without an allocation.
class Builder {
 public:
  explicit Builder(const LoadReportNames& names) : names_(names) {}

  // One metric: `field`, and for a map the entry's `key`. Returns "" or why it is refused.
  // false: refused, and why() says why. No string is made unless it is refused.
  bool Add(Field field, std::string_view key, double v) {
    const std::string_view group = field == Field::kNamed         ? "named_metrics"
                                   : field == Field::kUtilization ? "utilization"
                                   : field == Field::kRequestCost ? "request_cost"
                                                                  : "";
    if (IsMap(field) && key.empty()) return Refuse(fmt::format("a {} entry has an empty name", group));
    if (count_ == kMaxLoadReportEntries) {
      return Refuse(fmt::format("more than {} metrics", kMaxLoadReportEntries));
    }
    ++count_;
    if (IsMap(field)) {
      for (int i = 0; i < entries_; ++i) {
        if (entry_field_[i] == field && std::string_view(entry_name_[i], entry_len_[i]) == key) {
          return Refuse("appears twice");
        }
      }
      const std::string_view kept = Keep(key);
      entry_field_[entries_] = field;
      entry_name_[entries_] = kept.data();
      entry_len_[entries_++] = static_cast<uint16_t>(kept.size());
    } else {
      const uint32_t bit = 1u << int(field);
      if (fields_ & bit) return Refuse("appears twice");
      fields_ |= bit;
    }
    if (!std::isfinite(v)) return Refuse(fmt::format("must be a finite number, got {}", v));
    if (v < 0 && field != Field::kNamed && field != Field::kRequestCost) {
      return Refuse(fmt::format("must be >= 0, got {:g}", v));
    }
    switch (field) {
      case Field::kCpu:  // ORCA: may exceed 1 past a soft limit; the pool is full at 1
        Set(0, std::min(v, 1.0));
        return true;
      case Field::kMemory:
        if (v > 1) return Refuse(fmt::format("must be a fraction in [0, 1], got {:g}", v));
        Set(1, v);
        return true;
      case Field::kApplication:
      case Field::kRequestCost:
        return true;  // valid, and nothing the rules read
      case Field::kRpsFractional:
        out_.rps = v;
        out_.present |= kReportRps;
        has_fractional_ = true;
        return true;
      case Field::kRps:  // deprecated: rps_fractional wins when both are sent
        if (!has_fractional_) out_.rps = v;
        out_.present |= kReportRps;
        return true;
      case Field::kEps:
        out_.eps = v;
        out_.present |= kReportEps;
        return true;
      case Field::kNamed:
      case Field::kUtilization: {
        const int pool = key == names_.thread_pool       ? 2
                         : key == names_.connection_pool ? 3
                                                         : -1;
        if (field == Field::kUtilization && v > 1) {
          return Refuse(fmt::format("must be a fraction in [0, 1], got {:g}", v));
        }
        if (pool < 0) return true;
        if (!(v >= 0 && v <= 1)) {
          return Refuse(fmt::format("is the {} (load_report.{}_metric) and must be a fraction in "
                             "[0, 1], got {:g}",
                             ResourceName(pool), ResourceName(pool), v));
        }
        Set(pool, v);
        return true;
      }
      case Field::kUnknown: break;
    }
    return Refuse("is not a field of an ORCA load report");
  }

  const std::string& why() const { return why_; }
  const LoadReport& report() const { return out_; }

 private:
  void Set(int resource, double v) {
    out_.resources[resource] = v;
    out_.present |= 1u << resource;
  }

  // TEXT keys live in the header; JSON ones are copied (`copy_keys_`).
  std::string_view Keep(std::string_view key) {
    if (!copy_keys_ || key.size() > arena_.size() - used_) return key;
    char* at = arena_.data() + used_;
    std::copy(key.begin(), key.end(), at);
    used_ += key.size();
    return {at, key.size()};
  }

 public:
  bool copy_keys_ = false;

 private:
  bool Refuse(std::string why) {
    why_ = std::move(why);
    return false;
  }

  const LoadReportNames& names_;
  std::string why_;
  LoadReport out_;
  bool has_fractional_ = false;
  int count_ = 0, entries_ = 0;
  uint32_t fields_ = 0;
  // Not value-initialised (a string_view array would be, at a memset per parse).
  std::array<Field, kMaxLoadReportEntries> entry_field_;
  std::array<const char*, kMaxLoadReportEntries> entry_name_;
  std::array<uint16_t, kMaxLoadReportEntries> entry_len_;
  std::array<char, kMaxLoadReportBytes> arena_;
  size_t used_ = 0;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// An entry as quoted in a message: escaped, and cut at 64 bytes.
std::string Shown(std::string_view entry) {
  return entry.size() > 64 ? Quoted(entry.substr(0, 64)) + "..." : Quoted(entry);
}

Status Bad(const char* where, std::string why) {
  return {WT_ERR_BAD_LOAD_REPORT, fmt::format("{}: load report: {}", where, why)};
}

// TEXT: "name=value" entries (Envoy's parser also takes "name:value") separated by commas, read
// in one pass: each byte is looked at once, and from_chars finds where a number ends.
bool Ows(char c) { return c == ' ' || c == '\t'; }

// The fields as TEXT spells them, matched at the start of an entry without scanning the name
// first: the common case costs a compare per field instead of a pass over each byte. A map's
// literal ends with its '.'.
struct TextName {
  std::string_view literal;
  Field field;
};
constexpr TextName kTextNames[] = {
    {"cpu_utilization", Field::kCpu},        {"mem_utilization", Field::kMemory},
    {"named_metrics.", Field::kNamed},       {"rps_fractional", Field::kRpsFractional},
    {"eps", Field::kEps},                    {"utilization.", Field::kUtilization},
    {"application_utilization", Field::kApplication}, {"rps", Field::kRps},
    {"request_cost.", Field::kRequestCost},
};

// A standard field at p, followed by a separator (or, for a map, its entry's name): sets
// *field, *key and *name_end. False: fall back to the general scan (and its messages).
bool MatchText(const char* p, const char* end, Field* field, std::string_view* key,
               const char** name_end) {
  for (const TextName& t : kTextNames) {
    const size_t n = t.literal.size();
    if (size_t(end - p) <= n || p[0] != t.literal[0] || std::memcmp(p, t.literal.data(), n) != 0) {
      continue;
    }
    const char* q = p + n;
    if (IsMap(t.field)) {
      const char* k = q;
      while (q < end && *q != '=' && *q != ':' && *q != ',' && !Ows(*q)) ++q;
      if (q == k) return false;
      *key = std::string_view(k, q - k);
    } else if (*q != '=' && *q != ':' && !Ows(*q)) {
      continue;  // a longer name ("rps" before "rps_fractional" is ordered after it anyway)
    }
    while (q < end && Ows(*q)) ++q;
    if (q == end || (*q != '=' && *q != ':')) return false;
    *field = t.field;
    *name_end = q;
    return true;
  }
  return false;
}

// Clinger's fast path: "123.45" is 12345 / 10^2, and a quotient of two doubles that are exact
// (an integer below 2^53, a power of ten up to 10^22) is correctly rounded, so this is the value
// from_chars would give. Anything else (exponents, long digit strings, signs) goes to from_chars.
const char* FastDecimal(const char* p, const char* end, double* out) {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                      1e11, 1e12, 1e13, 1e14, 1e15};
  uint64_t m = 0;
  int digits = 0, frac = 0;
  const char* q = p;
  for (; q < end && *q >= '0' && *q <= '9'; ++q, ++digits) m = m * 10 + uint64_t(*q - '0');
  if (q < end && *q == '.') {
    for (++q; q < end && *q >= '0' && *q <= '9'; ++q, ++digits, ++frac) {
      m = m * 10 + uint64_t(*q - '0');
    }
  }
  if (digits == 0 || digits > 15 || (q < end && (*q == 'e' || *q == 'E' || *q == '.'))) {
    return nullptr;
  }
  *out = double(m) / kPow10[frac];
  return q;
}

Status ParseText(const char* where, std::string_view body, size_t base, Builder& b) {
  const char* const begin = body.data();
  const char* const end = begin + body.size();
  const char* p = begin;
  while (p < end && Ows(*p)) ++p;
  if (p == end) return Status::Ok();  // "TEXT " alone: an empty report
  for (int entry = 0;; ++entry) {
    const char* const start = p;
    // The entry as quoted in a message: up to its comma, without the spaces around it.
    const auto item = [&] {
      const char* e = start;
      while (e < end && *e != ',') ++e;
      return Trim(std::string_view(start, e - start));
    };
    const auto fail = [&](std::string_view why) {
      return Bad(where, fmt::format("entry {} (offset {}) {}: {}", entry, base + (start - begin),
                                    Shown(item()), why));
    };
    Field field = Field::kUnknown;
    std::string_view key, name;
    if (const char* name_end; MatchText(p, end, &field, &key, &name_end)) {
      name = std::string_view(start, name_end - start);
      p = name_end;
    } else {
      const char* dot = nullptr;
      while (p < end && *p != '=' && *p != ':' && *p != ',') {
        if (*p == '.' && !dot) dot = p;
        ++p;
      }
      if (p == start && (p == end || *p == ',')) {
        return Bad(where, fmt::format("entry {} (offset {}) is empty", entry, base + (start - begin)));
      }
      if (p == end || *p == ',') {
        return Bad(where, fmt::format("entry {} (offset {}) {} is not name=value", entry,
                                      base + (start - begin), Shown(item())));
      }
      name = Trim(std::string_view(start, p - start));
      if (dot) {
        field = FieldOf(std::string_view(start, dot - start));
        key = std::string_view(dot + 1, start + name.size() - dot - 1);
        if (!IsMap(field)) field = Field::kUnknown;
      } else {
        field = FieldOf(name);
        if (IsMap(field)) field = Field::kUnknown;  // a map needs its entry's name
      }
    }
    if (field == Field::kUnknown) {
      return fail(fmt::format("{} is not a field of an ORCA load report", Shown(name)));
    }
    ++p;  // the separator
    while (p < end && Ows(*p)) ++p;
    double v = 0;
    const char* num_end = FastDecimal(p, end, &v);
    std::errc ec{};
    if (!num_end) {
      const auto r = std::from_chars(p, end, v);
      num_end = r.ptr;
      ec = r.ec;
    }
    const char* q = num_end;
    while (q < end && Ows(*q)) ++q;
    if (ec != std::errc() || num_end == p || (q < end && *q != ',')) {
      return fail("the value is not a number");
    }
    if (!b.Add(field, key, v)) [[unlikely]] return fail(fmt::format("{} {}", Shown(name), b.why()));
    if (q == end) return Status::Ok();
    p = q + 1;  // past the comma
    while (p < end && Ows(*p)) ++p;
    if (p == end) {
      return Bad(where, fmt::format("entry {} (offset {}) is empty", entry + 1, base + (p - begin)));
    }
  }
}

// JSON: one object of the fields; the maps are objects of numbers. proto3's JSON mapping also
// allows a number written as a string, so "0.5" is taken too.
class JsonReport : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit JsonReport(Builder& b) : b_(b) {}
  const std::string& error() const { return error_; }

  bool null() override { return Fail("null is not a number"); }
  bool boolean(bool) override { return Fail("a boolean is not a number"); }
  bool number_integer(number_integer_t v) override { return Number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool string(string_t& s) override {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      return Fail(fmt::format("the string {} is not a number", Shown(s)));
    }
    return Number(v);
  }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }
  bool start_object(std::size_t) override {
    if (depth_ == 0) return ++depth_, true;
    if (depth_ == 1 && IsMap(field_)) return ++depth_, true;
    return Fail(depth_ == 1 ? "only named_metrics, utilization and request_cost are objects"
                            : "nested objects are not part of a load report");
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      field_ = FieldOf(k);
      name_ = k;
      if (field_ == Field::kUnknown) {
        return Fail(fmt::format("{} is not a field of an ORCA load report", Shown(k)));
      }
    } else {
      entry_ = k;
    }
    return true;
  }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return Fail("arrays are not part of a load report"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t pos, const std::string&,
                   const nlohmann::json::exception&) override {
    if (error_.empty()) error_ = fmt::format("not JSON at byte {} of the object", pos);
    return false;
  }

 private:
  bool Number(double v) {
    if (depth_ == 0) return Fail("the report must be a JSON object");
    if (depth_ == 1 && IsMap(field_)) return Fail(fmt::format("{} must be an object", name_));
    if (b_.Add(field_, depth_ == 2 ? std::string_view(entry_) : "", v)) return true;
    return Fail(depth_ == 2 ? fmt::format("{}.{} {}", name_, Shown(entry_), b_.why())
                            : fmt::format("{} {}", name_, b_.why()));
  }
  bool Fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  Builder& b_;
  int depth_ = 0;
  Field field_ = Field::kUnknown;
  std::string name_, entry_, error_;
};

Status ParseJson(const char* where, std::string_view body, Builder& b) {
  b.copy_keys_ = true;
  JsonReport sax(b);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(body.begin(), body.end(), &sax);
  } catch (const nlohmann::json::exception& e) {
    return Bad(where, fmt::format("JSON: {}", e.what()));
  }
  if (!ok) return Bad(where, fmt::format("JSON: {}", sax.error().empty() ? "not JSON" : sax.error()));
  return Status::Ok();
}

}  // namespace

Status ParseLoadReport(const char* where, std::string_view header, const LoadReportNames& names,
                       LoadReport* out) {
  if (header.size() > kMaxLoadReportBytes) {
    return Bad(where, fmt::format("{} bytes, more than the {} a load report may have",
                                  header.size(), kMaxLoadReportBytes));
  }
  std::string_view value = Trim(header);
  const size_t base = value.empty() ? 0 : static_cast<size_t>(value.data() - header.data());
  // "TEXT " with nothing after it lost its space to the trim: an empty report.
  if (value == kText.substr(0, 4) || value == kJson.substr(0, 4)) {
    value = value == kText.substr(0, 4) ? kText : kJson;
  }
  Builder b(names);
  Status s;
  if (value.starts_with(kText)) {
    s = ParseText(where, value.substr(kText.size()), base + kText.size(), b);
  } else if (value.starts_with(kJson)) {
    s = ParseJson(where, value.substr(kJson.size()), b);
  } else if (value.starts_with(kBin)) {
    s = Bad(where, "the BIN (serialized protobuf) format is not supported: send TEXT or JSON");
  } else {
    s = Bad(where, fmt::format("{} does not start with a format, \"TEXT \" or \"JSON \"",
                               Shown(value.substr(0, 16))));
  }
  if (s.ok()) *out = b.report();
  return s;
}

}  // namespace weighted
