#include "stats/load_report.h"

#include <charconv>
#include <cmath>
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

uint64_t Hash(std::string_view prefix, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : prefix) h = (h ^ c) * 0x100000001b3ull;
  h = (h ^ '.') * 0x100000001b3ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// What one parse has seen so far, and the report it builds. Names are remembered by hash (a
// JSON key does not outlive its callback), so a duplicate is found without an allocation.
class Builder {
 public:
  explicit Builder(const LoadReportNames& names) : names_(names) {}

  // One metric: `field`, and for a map the entry's `key`. Returns "" or why it is refused.
  std::string Add(Field field, std::string_view key, double v) {
    const std::string_view group = field == Field::kNamed         ? "named_metrics"
                                   : field == Field::kUtilization ? "utilization"
                                   : field == Field::kRequestCost ? "request_cost"
                                                                  : "";
    if (IsMap(field) && key.empty()) return fmt::format("a {} entry has an empty name", group);
    if (count_ == kMaxLoadReportEntries) {
      return fmt::format("more than {} metrics", kMaxLoadReportEntries);
    }
    const uint64_t h = IsMap(field) ? Hash(group, key) : Hash("", kFields[int(field)].proto);
    for (int i = 0; i < count_; ++i) {
      if (seen_[i] == h) return "appears twice";
    }
    seen_[count_++] = h;
    if (!std::isfinite(v)) return fmt::format("must be a finite number, got {}", v);
    if (v < 0 && field != Field::kNamed && field != Field::kRequestCost) {
      return fmt::format("must be >= 0, got {:g}", v);
    }
    switch (field) {
      case Field::kCpu:  // ORCA: may exceed 1 past a soft limit; the pool is full at 1
        Set(0, std::min(v, 1.0));
        return "";
      case Field::kMemory:
        if (v > 1) return fmt::format("must be a fraction in [0, 1], got {:g}", v);
        Set(1, v);
        return "";
      case Field::kApplication:
      case Field::kRequestCost:
        return "";  // valid, and nothing the rules read
      case Field::kRpsFractional:
        out_.rps = v;
        out_.present |= kReportRps;
        has_fractional_ = true;
        return "";
      case Field::kRps:  // deprecated: rps_fractional wins when both are sent
        if (!has_fractional_) out_.rps = v;
        out_.present |= kReportRps;
        return "";
      case Field::kEps:
        out_.eps = v;
        out_.present |= kReportEps;
        return "";
      case Field::kNamed:
      case Field::kUtilization: {
        const int pool = key == names_.thread_pool       ? 2
                         : key == names_.connection_pool ? 3
                                                         : -1;
        if (field == Field::kUtilization && v > 1) {
          return fmt::format("must be a fraction in [0, 1], got {:g}", v);
        }
        if (pool < 0) return "";
        if (!(v >= 0 && v <= 1)) {
          return fmt::format("is the {} (load_report.{}_metric) and must be a fraction in "
                             "[0, 1], got {:g}",
                             ResourceName(pool), ResourceName(pool), v);
        }
        Set(pool, v);
        return "";
      }
      case Field::kUnknown: break;
    }
    return "is not a field of an ORCA load report";
  }

  const LoadReport& report() const { return out_; }

 private:
  void Set(int resource, double v) {
    out_.resources[resource] = v;
    out_.present |= 1u << resource;
  }

  const LoadReportNames& names_;
  LoadReport out_;
  bool has_fractional_ = false;
  int count_ = 0;
  std::array<uint64_t, kMaxLoadReportEntries> seen_;
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

// TEXT: "name=value" entries (Envoy's parser also takes "name:value") separated by commas.
Status ParseText(const char* where, std::string_view body, size_t base, Builder& b) {
  size_t at = 0;
  for (int entry = 0; at <= body.size(); ++entry) {
    size_t comma = body.find(',', at);
    if (comma == std::string_view::npos) comma = body.size();
    const std::string_view raw = body.substr(at, comma - at);
    const std::string_view item = Trim(raw);
    const size_t offset = base + (item.empty() ? at : static_cast<size_t>(item.data() - body.data()));
    at = comma + 1;
    if (item.empty()) {
      if (comma == body.size() && entry == 0) break;  // "TEXT " alone: an empty report
      return Bad(where, fmt::format("entry {} (offset {}) is empty", entry, offset));
    }
    const size_t sep = item.find_first_of("=:");
    if (sep == std::string_view::npos) {
      return Bad(where, fmt::format("entry {} (offset {}) {} is not name=value", entry, offset,
                                    Shown(item)));
    }
    const std::string_view name = Trim(item.substr(0, sep));
    const std::string_view value = Trim(item.substr(sep + 1));
    Field field = Field::kUnknown;
    std::string_view key;
    if (const size_t dot = name.find('.'); dot != std::string_view::npos) {
      field = FieldOf(name.substr(0, dot));
      key = name.substr(dot + 1);
      if (!IsMap(field)) field = Field::kUnknown;
    } else {
      field = FieldOf(name);
      if (IsMap(field)) field = Field::kUnknown;  // a map needs its entry's name
    }
    if (field == Field::kUnknown) {
      return Bad(where, fmt::format("entry {} (offset {}) {}: {} is not a field of an ORCA load "
                                    "report",
                                    entry, offset, Shown(item), Shown(name)));
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return Bad(where, fmt::format("entry {} (offset {}) {}: the value is not a number", entry,
                                    offset, Shown(item)));
    }
    if (std::string why = b.Add(field, key, v); !why.empty()) {
      return Bad(where, fmt::format("entry {} (offset {}) {}: {} {}", entry, offset, Shown(item),
                                    Shown(name), why));
    }
  }
  return Status::Ok();
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
    const std::string why = b_.Add(field_, depth_ == 2 ? std::string_view(entry_) : "", v);
    if (why.empty()) return true;
    return Fail(depth_ == 2 ? fmt::format("{}.{} {}", name_, Shown(entry_), why)
                            : fmt::format("{} {}", name_, why));
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
