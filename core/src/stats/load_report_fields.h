// The pieces the two forms of a load report share: ORCA's field names and the Builder that
// checks each metric and fills the LoadReport. Internal to stats/load_report*.cc.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "stats/load_report.h"
#include "util/quoted.h"

namespace weighted::load_report_internal {

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

inline bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && a[0] == b[0] && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

inline Field FieldOf(std::string_view name) {
  if (name.empty()) return Field::kUnknown;
  for (const FieldName& f : kFields) {
    if (SameName(name, f.proto) || SameName(name, f.camel)) return f.field;
  }
  return Field::kUnknown;
}

inline bool IsMap(Field f) { return f == Field::kNamed || f == Field::kUtilization || f == Field::kRequestCost; }

// What one parse has seen so far, and the report it builds. A field is remembered by a bit, a
// map entry by its name, a view that lives as long as the parse (into the header, or into the
// JSON scanner's unescaped copy), so a duplicate is found without an allocation.
//
// Each Add has a short path for a value the rules take as it is (a fraction, or a rate), and
// leaves everything else, refusals and their messages included, to Checked(): the common header
// then costs a few compares per metric, and no string is made unless it is refused.
class Builder {
 public:
  explicit Builder(const LoadReportNames& names) : names_(names) {}

  // One metric: `field`, and for a map the entry's `key`. false: refused, and why() says why.
  bool Add(Field field, std::string_view key, double v) {
    return IsMap(field) ? AddEntry(field, key, v) : AddScalar(field, v);
  }

  // A standard field that is not a map.
  bool AddScalar(Field field, double v) {
    if (count_ == kMaxLoadReportEntries) [[unlikely]] return TooMany();
    ++count_;
    const uint32_t bit = 1u << int(field);
    if (fields_ & bit) [[unlikely]] return Refuse("appears twice");
    fields_ |= bit;
    // NaN fails both compares; a rate may be any finite number >= 0, the rest are fractions.
    const bool usual = field >= Field::kRpsFractional && field <= Field::kEps
                           ? v >= 0 && v <= std::numeric_limits<double>::max()
                           : v >= 0 && v <= 1;
    if (!usual) [[unlikely]] return Checked(field, {}, v);
    switch (field) {
      case Field::kCpu: Set(0, v); return true;
      case Field::kMemory: Set(1, v); return true;
      case Field::kApplication: return true;
      case Field::kRpsFractional: SetRps(v, /*fractional=*/true); return true;
      case Field::kRps: SetRps(v, false); return true;
      case Field::kEps:
        out_.eps = v;
        out_.present |= kReportEps;
        return true;
      default: return Checked(field, {}, v);
    }
  }

  // An entry `key` of the map `map` (kNamed, kUtilization or kRequestCost).
  bool AddEntry(Field map, std::string_view key, double v) {
    if (key.empty()) [[unlikely]] return EmptyName(map);
    if (count_ == kMaxLoadReportEntries) [[unlikely]] return TooMany();
    ++count_;
    for (int i = 0; i < entries_; ++i) {
      if (entry_len_[i] == key.size() && entry_field_[i] == map &&
          std::memcmp(entry_name_[i], key.data(), key.size()) == 0) [[unlikely]] {
        return Refuse("appears twice");
      }
    }
    entry_field_[entries_] = map;
    entry_name_[entries_] = key.data();
    entry_len_[entries_++] = static_cast<uint16_t>(key.size());
    if (!(v >= 0 && v <= 1) || map == Field::kRequestCost) return Checked(map, key, v);
    if (const int pool = PoolOf(key); pool >= 0) Set(pool, v);
    else if (map == Field::kNamed && IsLatency(key)) SetLatency(v);
    return true;
  }

  const std::string& why() const { return why_; }
  const LoadReport& report() const { return out_; }

 private:
  // The pool a named_metrics / utilization entry is, by the config's names; -1: neither.
  int PoolOf(std::string_view key) const {
    return key == names_.thread_pool ? 2 : key == names_.connection_pool ? 3 : -1;
  }

  // An empty name matches nothing: a map entry's name never is (EmptyName refuses it).
  bool IsLatency(std::string_view key) const { return key == names_.latency; }
  void SetLatency(double ms) {
    out_.latency_ms = ms;
    out_.has_latency = true;
  }

  void Set(int resource, double v) {
    out_.resources[resource] = v;
    out_.present |= 1u << resource;
  }
  void SetRps(double v, bool fractional) {
    // rps is deprecated: rps_fractional wins when both are sent, in either order.
    if (fractional || !has_fractional_) out_.rps = v;
    has_fractional_ |= fractional;
    out_.present |= kReportRps;
  }

  // Every value of `field` (and `key`) that the short paths leave: checked for what the field
  // takes, with the reason when it does not.
  [[gnu::noinline]] bool Checked(Field field, std::string_view key, double v) {
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
      case Field::kRps:
        SetRps(v, field == Field::kRpsFractional);
        return true;
      case Field::kEps:
        out_.eps = v;
        out_.present |= kReportEps;
        return true;
      case Field::kNamed:
      case Field::kUtilization: {
        if (field == Field::kNamed && IsLatency(key)) {
          // Milliseconds, not a fraction: a negative or absurd time would skew the fleet's
          // median that every endpoint's figure is judged against.
          if (!(v >= 0 && v <= names_.max_latency_ms)) {
            return Refuse(fmt::format("is the server's latency (load_report.latency_metric) and "
                                      "must be milliseconds in [0, {:g}] (limits.max_latency_ms), "
                                      "got {:g}",
                                      names_.max_latency_ms, v));
          }
          SetLatency(v);
          return true;
        }
        const int pool = PoolOf(key);
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

  [[gnu::cold, gnu::noinline]] bool TooMany() {
    return Refuse(fmt::format("more than {} metrics", kMaxLoadReportEntries));
  }
  [[gnu::cold, gnu::noinline]] bool EmptyName(Field map) {
    const std::string_view group = map == Field::kNamed         ? "named_metrics"
                                   : map == Field::kUtilization ? "utilization"
                                                                : "request_cost";
    return Refuse(fmt::format("a {} entry has an empty name", group));
  }
  [[gnu::cold, gnu::noinline]] bool Refuse(std::string_view why) {
    why_.assign(why.data(), why.size());
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
};

// An entry as quoted in a message: escaped, and cut at 64 bytes.
inline std::string Shown(std::string_view entry) {
  return entry.size() > 64 ? Quoted(entry.substr(0, 64)) + "..." : Quoted(entry);
}

// The JSON form's body (after "JSON "): false with *why (what and at which byte) when refused.
bool ScanJson(std::string_view body, Builder& b, std::string* why);

}  // namespace weighted::load_report_internal
