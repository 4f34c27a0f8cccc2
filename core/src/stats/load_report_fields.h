// The pieces the two forms of a load report share: ORCA's field names and the Builder that
// checks each metric and fills the LoadReport. Internal to stats/load_report*.cc.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
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
class Builder {
 public:
  explicit Builder(const LoadReportNames& names) : names_(names) {}

  // One metric: `field`, and for a map the entry's `key`. false: refused, and why() says why.
  // No string is made unless it is refused.
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
      entry_field_[entries_] = field;
      entry_name_[entries_] = key.data();
      entry_len_[entries_++] = static_cast<uint16_t>(key.size());
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
};

// An entry as quoted in a message: escaped, and cut at 64 bytes.
inline std::string Shown(std::string_view entry) {
  return entry.size() > 64 ? Quoted(entry.substr(0, 64)) + "..." : Quoted(entry);
}

// The JSON form's body (after "JSON "): false with *why (what and at which byte) when refused.
bool ScanJson(std::string_view body, Builder& b, std::string* why);

}  // namespace weighted::load_report_internal
