#include "stats/load_report.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "stats/load_report_fields.h"
#include "util/quoted.h"

namespace weighted {

namespace {

using namespace load_report_internal;

constexpr std::string_view kText = "TEXT ";
constexpr std::string_view kBin = "BIN ";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
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

// Whether s starts with the 4-letter format name `format` and a space, or is the name alone
// ("TEXT " lost its space to the trim): at a constant length, a word compare or two.
bool IsFormat(std::string_view s, const char (&format)[5]) {
  return s.size() >= 4 && std::memcmp(s.data(), format, 4) == 0 && (s.size() == 4 || s[4] == ' ');
}

}  // namespace

Status ParseLoadReport(const char* where, std::string_view header, const LoadReportNames& names,
                       LoadReport* out) {
  if (header.size() > kMaxLoadReportBytes) [[unlikely]] {
    return Bad(where, fmt::format("{} bytes, more than the {} a load report may have",
                                  header.size(), kMaxLoadReportBytes));
  }
  const std::string_view value = Trim(header);
  const size_t base = value.empty() ? 0 : static_cast<size_t>(value.data() - header.data());
  // The format's name and its space; "TEXT" alone is an empty report.
  const std::string_view body = value.substr(std::min<size_t>(value.size(), kText.size()));
  Builder b(names);
  if (IsFormat(value, "JSON")) {
    std::string why;
    if (!ScanJson(body, b, &why)) [[unlikely]] return Bad(where, fmt::format("JSON: {}", why));
  } else if (IsFormat(value, "TEXT")) {
    if (Status s = ParseText(where, body, base + kText.size(), b); !s.ok()) [[unlikely]] return s;
  } else if (value.starts_with(kBin)) {
    return Bad(where, "the BIN (serialized protobuf) format is not supported: send TEXT or JSON");
  } else {
    return Bad(where, fmt::format("{} does not start with a format, \"TEXT \" or \"JSON \"",
                                  Shown(value.substr(0, 16))));
  }
  *out = b.report();
  return Status::Ok();
}

}  // namespace weighted
