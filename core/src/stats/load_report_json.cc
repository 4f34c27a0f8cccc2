// The JSON form of a load report, scanned in one pass (see JsonScanner).
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "stats/load_report_fields.h"

namespace weighted::load_report_internal {

namespace {

// JSON: proto3's JSON mapping of an OrcaLoadReport is one object of numbers whose only nested
// objects are the three maps, each an object of numbers. That shape is scanned here in one pass
// over the bytes, with no document and no copy: a name is a view into the header unless it has
// escapes, and then it is unescaped into `arena_` (never longer than the header). Anything else a
// JSON value could be (arrays, deeper objects, null, booleans) is refused by name, at its byte.
// proto3 also lets a number be written as a string, so "0.5" is taken too.
//
// Each step takes the cursor and returns it past what it read, or nullptr when it refused (and
// error_ says what and where): a cursor in a register, not a member stored at every byte. The
// messages are made out of line, so the scanning steps keep their registers for the scan.
class JsonScanner {
 public:
  JsonScanner(std::string_view body, Builder& b)
      : begin_(body.data()), end_(body.data() + body.size()), b_(b) {}

  bool Run() {
    const char* p = Ws(begin_);
    if (p == end_) return Syntax(p, "an object");
    if (*p != '{') {
      if (*p == '[') return Fail(p, "arrays are not part of a load report");
      return Fail(p, "the report must be a JSON object");
    }
    p = Members(p, /*map=*/Field::kUnknown, {});
    if (!p) return false;
    p = Ws(p);
    return p == end_ || Syntax(p, "the end after the object");
  }
  const std::string& error() const { return error_; }

 private:
  static bool IsWs(char c) {
    constexpr uint64_t kWs = 1ull << ' ' | 1ull << '\t' | 1ull << '\n' | 1ull << '\r';
    return static_cast<unsigned char>(c) <= ' ' && (kWs >> static_cast<unsigned char>(c) & 1);
  }
  const char* Ws(const char* q) const {
    while (q < end_ && IsWs(*q)) ++q;
    return q;
  }

  // Both return nullptr (false), for `return Syntax(...)` in either kind of step.
  struct Refusal {
    operator const char*() const { return nullptr; }
    operator bool() const { return false; }
  };
  [[gnu::cold, gnu::noinline]] Refusal Syntax(const char* at, std::string_view expected) {
    error_ = fmt::format("not JSON at byte {} of the object: expected {}, found {}", at - begin_,
                         expected, at == end_ ? "the end" : Shown(std::string_view(at, 1)));
    return {};
  }
  [[gnu::cold, gnu::noinline]] Refusal Fail(const char* at, std::string_view why) {
    error_ = fmt::format("{} (byte {} of the object)", why, at - begin_);
    return {};
  }

  // An object at p ('{'): the report itself when `map` is kUnknown, else the entries of the
  // map field `map` (spelled `group`).
  const char* Members(const char* p, Field map, std::string_view group) {
    p = Ws(p + 1);
    if (p < end_ && *p == '}') return p + 1;
    for (;;) {
      if (p == end_ || *p != '"') return Syntax(p, "a name in double quotes");
      const char* const name_at = p;
      std::string_view name;
      Field known = Field::kUnknown;
      if (map == Field::kUnknown) p = KnownName(p, &known);
      if (known != Field::kUnknown) {
        name = std::string_view(name_at + 1, p - name_at - 2);
      } else if (p = String(p, &name); !p) {
        return nullptr;
      }
      if (p == end_ || *p != ':') [[unlikely]] {  // ':' at once is the usual case: no Ws call
        p = Ws(p);
        if (p == end_ || *p != ':') return Syntax(p, "':' after the name");
      }
      p = Ws(p + 1);
      if (map == Field::kUnknown) {
        p = Field1(p, name_at, name, known);
      } else {
        const char* const at = p;
        double v = 0;
        p = Value(p, &v, "nested objects are not part of a load report");
        if (p && !b_.AddEntry(map, name, v)) [[unlikely]] return EntryRefused(at, group, name);
      }
      if (!p) return nullptr;
      if (p < end_ && *p != ',' && *p != '}') p = Ws(p);
      if (p < end_ && *p == ',') {
        p = Ws(p + 1);
        continue;
      }
      if (p < end_ && *p == '}') return p + 1;
      return Syntax(p, "',' or '}'");
    }
  }

  // A field's proto name at p, quotes and all, matched without scanning the string first (the
  // common case, as in MatchText): one candidate per first letter (three for 'r'), compared at
  // a constant length, which the compiler turns into a few word compares. Returns p past the
  // name with *f set, or p itself when it is none of them or spelled another way (escapes,
  // lowerCamelCase), which String() and FieldOf() then take.
  const char* KnownName(const char* p, Field* f) const {
    if (end_ - p < 2) return p;
    const char* q = p;
    switch (p[1]) {
      case 'c': *f = Is(&q, "cpu_utilization\"") ? Field::kCpu : *f; break;
      case 'm': *f = Is(&q, "mem_utilization\"") ? Field::kMemory : *f; break;
      case 'n': *f = Is(&q, "named_metrics\"") ? Field::kNamed : *f; break;
      case 'e': *f = Is(&q, "eps\"") ? Field::kEps : *f; break;
      case 'u': *f = Is(&q, "utilization\"") ? Field::kUtilization : *f; break;
      case 'a': *f = Is(&q, "application_utilization\"") ? Field::kApplication : *f; break;
      case 'r':
        *f = Is(&q, "rps_fractional\"") ? Field::kRpsFractional
             : Is(&q, "rps\"")          ? Field::kRps
             : Is(&q, "request_cost\"") ? Field::kRequestCost
                                        : *f;
        break;
      default: break;
    }
    return q;
  }
  // Whether the opening quote at *q is followed by `quoted` (a name and its closing quote); if
  // so, *q moves past it.
  template <size_t N>
  bool Is(const char** q, const char (&quoted)[N]) const {
    constexpr size_t n = N - 1;
    if (size_t(end_ - *q) <= n || std::memcmp(*q + 1, quoted, n) != 0) return false;
    *q += n + 1;
    return true;
  }

  // One member of the report at p (its value): a standard field and its number, or a map and
  // its object.
  const char* Field1(const char* p, const char* name_at, std::string_view name, Field known) {
    const Field field = known != Field::kUnknown ? known : FieldOf(name);
    if (field == Field::kUnknown) [[unlikely]] return NotAField(name_at, name);
    if (IsMap(field)) {
      if (p == end_ || *p != '{') [[unlikely]] return NotAnObject(p, name);
      const uint32_t bit = 1u << int(field);
      if (maps_ & bit) [[unlikely]] return MapTwice(name_at, name);
      maps_ |= bit;
      return Members(p, field, name);
    }
    const char* const at = p;
    double v = 0;
    p = Value(p, &v, "only named_metrics, utilization and request_cost are objects");
    if (p && !b_.AddScalar(field, v)) [[unlikely]] return Refused(at, name);
    return p;
  }

  [[gnu::cold, gnu::noinline]] const char* NotAField(const char* name_at, std::string_view name) {
    return Fail(name_at, fmt::format("{} is not a field of an ORCA load report", Shown(name)));
  }
  [[gnu::cold, gnu::noinline]] const char* NotAnObject(const char* at, std::string_view name) {
    double ignored;
    if (!OtherValue(at, &ignored, "")) return nullptr;  // what it is instead, if that is refused
    return Fail(at, fmt::format("{} must be an object", name));
  }
  [[gnu::cold, gnu::noinline]] const char* MapTwice(const char* name_at, std::string_view name) {
    return Fail(name_at, fmt::format("{} appears twice", name));
  }
  [[gnu::cold, gnu::noinline]] const char* Refused(const char* at, std::string_view name) {
    return Fail(at, fmt::format("{} {}", name, b_.why()));
  }
  [[gnu::cold, gnu::noinline]] const char* EntryRefused(const char* at, std::string_view group,
                                                        std::string_view name) {
    return Fail(at, fmt::format("{}.{} {}", group, Shown(name), b_.why()));
  }

  // A value that must be a number: a JSON number or a string holding one. `object` is why an
  // object is refused here.
  const char* Value(const char* p, double* v, const char* object) {
    if (p < end_ && ((*p >= '0' && *p <= '9') || *p == '-')) [[likely]] return Number(p, v);
    return OtherValue(p, v, object);
  }
  // The rest: a number in a string, or what is refused in its place.
  [[gnu::noinline]] const char* OtherValue(const char* p, double* v, const char* object) {
    if (p == end_) return Syntax(p, "a value");
    const char* const at = p;
    switch (*p) {
      case '"': {
        std::string_view s;
        p = String(p, &s);
        if (!p) return nullptr;
        const auto [e, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
        if (s.empty() || ec != std::errc() || e != s.data() + s.size()) {
          return Fail(at, fmt::format("the string {} is not a number", Shown(s)));
        }
        return p;
      }
      case '{': return Fail(at, *object ? object : "an object is not a number");
      case '[': return Fail(at, "arrays are not part of a load report");
      case 'n': return Literal(p, "null") ? Fail(at, "null is not a number") : Refusal{};
      case 't': return Literal(p, "true") ? Fail(at, "a boolean is not a number") : Refusal{};
      case 'f': return Literal(p, "false") ? Fail(at, "a boolean is not a number") : Refusal{};
      default: return Number(p, v);
    }
  }

  bool Literal(const char* p, std::string_view word) {
    if (size_t(end_ - p) < word.size() || std::memcmp(p, word.data(), word.size()) != 0) {
      return Syntax(p, "a value");
    }
    return true;
  }

  // A number at p ('-' or a digit). The usual one (an integer part without a leading zero,
  // maybe a fraction, no exponent, at most 19 digits whose value is at most 2^53) is read here
  // in one pass and divided by an exact power of ten: Clinger's fast path, correctly rounded, so
  // the value from_chars would give. Anything else is read again by NumberInFull.
  const char* Number(const char* p, double* v) {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                        1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                        1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    const char* q = p;
    const char* const end = end_;
    const bool negative = *q == '-';
    q += negative;
    const char* const first = q;
    uint64_t m = 0;
    unsigned d;
    const auto digit = [&] { return q < end && (d = static_cast<unsigned char>(*q) - '0') <= 9; };
    for (; digit(); ++q) m = m * 10 + d;
    const char* const point = q;
    const ptrdiff_t ints = point - first;
    ptrdiff_t frac = 0;
    if (q < end && *q == '.') {
      for (++q; digit(); ++q) m = m * 10 + d;
      frac = q - point - 1;
      if (frac == 0) [[unlikely]] return NumberInFull(p, v);
    }
    if (ints == 0 || (*first == '0' && ints > 1) || ints + frac > 19 || m > (uint64_t{1} << 53) ||
        (q < end && (*q | 0x20) == 'e')) [[unlikely]] {
      return NumberInFull(p, v);
    }
    *v = double(m) / kPow10[frac];
    if (negative) *v = -*v;
    return q;
  }

  // JSON's number grammar in full, with its errors; up to 15 significant digits and no exponent
  // still take the fast path, the rest goes to from_chars over the span just checked.
  [[gnu::noinline]] const char* NumberInFull(const char* const start, double* v) {
    static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char* q = start;
    const char* const end = end_;
    const bool negative = *q == '-';
    if (negative) ++q;
    const auto digit = [&] { return q < end && *q >= '0' && *q <= '9'; };
    if (!digit()) return Syntax(q, "a value");
    uint64_t m = 0;
    int digits = 0, frac = 0;
    if (*q == '0') {
      ++q;
    } else {
      for (; digit(); ++q, ++digits) m = m * 10 + uint64_t(*q - '0');
    }
    if (q < end && *q == '.') {
      ++q;
      if (!digit()) return Syntax(q, "a digit after the decimal point");
      for (; digit(); ++q, ++frac) m = m * 10 + uint64_t(*q - '0');
      digits += frac;
    }
    bool exponent = false;
    if (q < end && (*q == 'e' || *q == 'E')) {
      exponent = true;
      ++q;
      if (q < end && (*q == '+' || *q == '-')) ++q;
      if (!digit()) return Syntax(q, "a digit in the exponent");
      while (digit()) ++q;
    }
    if (!exponent && digits <= 15) {
      *v = frac == 0 ? double(m) : double(m) / kPow10[frac];
      if (negative) *v = -*v;
      return q;
    }
    const auto [e, ec] = std::from_chars(start, q, *v);
    if (ec == std::errc::result_out_of_range) {
      // Beyond a double either way: too small is 0, too large is refused as not finite.
      const char* x = start;
      while (x < q && *x != 'e' && *x != 'E') ++x;
      const bool tiny = x + 1 < q && x[1] == '-';
      *v = tiny ? 0.0 : HUGE_VAL;
      if (negative) *v = -*v;
      return q;
    }
    if (ec != std::errc() || e != q) return Fail(start, "the number is not a double");
    return q;
  }

  // A string at p (its opening quote): returns p past its closing one. Its content is a view
  // into the body, or unescaped into arena_ when it has a backslash. UTF-8 is checked: JSON text
  // is UTF-8, and a name goes into messages.
  // Bytes a string takes as they are: printable ASCII but the quote and the backslash.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
    return t;
  }();

  // The bytes from p that a string takes as they are: returns the first that it does not (or
  // end_). Eight at a time where there are eight: a byte is flagged if it is the quote, the
  // backslash, below 0x20 or from 0x80 (the first flagged one exactly, as in ReadDigits).
  const char* PlainRun(const char* p) const {
    if constexpr (std::endian::native == std::endian::little) {
      constexpr uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
      const auto zero = [&](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
      while (end_ - p >= 8) {
        uint64_t x;
        std::memcpy(&x, p, 8);
        const uint64_t stop = zero(x ^ (kOnes * '"')) | zero(x ^ (kOnes * '\\')) |
                              ((x - kOnes * 0x20) & ~x & kHigh) | (x & kHigh);
        if (stop) return p + (std::countr_zero(stop) >> 3);
        p += 8;
      }
    }
    while (p < end_ && kPlain[static_cast<unsigned char>(*p)]) ++p;
    return p;
  }

  const char* String(const char* const open, std::string_view* out) {
    const char* const first = open + 1;
    const char* p = first;
    char* w = nullptr;  // where unescaped bytes go once there is an escape
    for (;;) {
      const char* const run = p;
      p = PlainRun(p);
      if (w) {
        std::memcpy(w, run, p - run);
        w += p - run;
      }
      if (p == end_) return Syntax(open, "a string closed by '\"'");
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') break;
      if (c < 0x20) return Fail(p, "a control character inside a string must be escaped");
      if (c == '\\') {
        if (!w) {
          w = arena_.data() + used_;
          std::memcpy(w, first, p - first);
          w += p - first;
        }
        p = Escape(p, &w);
        if (!p) return nullptr;
        continue;
      }
      const int n = Utf8(p);  // c >= 0x80
      if (n == 0) return Fail(p, "a string is not UTF-8");
      if (w) {
        std::memcpy(w, p, n);
        w += n;
      }
      p += n;
    }
    if (w) {
      char* const s = arena_.data() + used_;
      *out = std::string_view(s, w - s);
      used_ += w - s;
    } else {
      *out = std::string_view(first, p - first);
    }
    return p + 1;  // past the closing quote
  }

  // One escape at p ('\'), written at *w: returns p past it.
  const char* Escape(const char* const at, char** w) {
    if (end_ - at < 2) return Fail(at, "an escape is cut short");
    const char e = at[1];
    const char* p = at + 2;
    char plain = 0;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': break;
      default: return Fail(at, fmt::format("{} is not a JSON escape", Shown(std::string_view(at, 2))));
    }
    if (e != 'u') {
      *(*w)++ = plain;
      return p;
    }
    uint32_t cp = 0;
    if (!Hex4(p, &cp)) return Fail(at, "\\u needs four hex digits");
    p += 4;
    if (cp >= 0xdc00 && cp <= 0xdfff) return Fail(at, "a lone low surrogate");
    if (cp >= 0xd800 && cp <= 0xdbff) {
      uint32_t low = 0;
      if (end_ - p < 2 || p[0] != '\\' || p[1] != 'u') return Fail(at, "a lone high surrogate");
      p += 2;
      if (!Hex4(p, &low) || low < 0xdc00 || low > 0xdfff) return Fail(at, "a lone high surrogate");
      p += 4;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    char*& o = *w;
    if (cp < 0x80) {
      *o++ = char(cp);
    } else if (cp < 0x800) {
      *o++ = char(0xc0 | (cp >> 6));
      *o++ = char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *o++ = char(0xe0 | (cp >> 12));
      *o++ = char(0x80 | ((cp >> 6) & 0x3f));
      *o++ = char(0x80 | (cp & 0x3f));
    } else {
      *o++ = char(0xf0 | (cp >> 18));
      *o++ = char(0x80 | ((cp >> 12) & 0x3f));
      *o++ = char(0x80 | ((cp >> 6) & 0x3f));
      *o++ = char(0x80 | (cp & 0x3f));
    }
    return p;
  }

  // Four hex digits at p, all there.
  bool Hex4(const char* p, uint32_t* cp) const {
    if (end_ - p < 4) return false;
    for (int i = 0; i < 4; ++i) {
      const char c = p[i];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      *cp = *cp << 4 | uint32_t(d);
    }
    return true;
  }

  // The length of one multi-byte UTF-8 sequence at p (RFC 3629: no overlongs, surrogates or
  // past U+10FFFF); 0 if it is not one.
  int Utf8(const char* p) const {
    const auto at = [&](ptrdiff_t i) { return static_cast<unsigned char>(p[i]); };
    const unsigned char c = at(0);
    int n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return 0;
    }
    if (end_ - p <= n) return 0;
    if (at(1) < lo || at(1) > hi) return 0;
    for (int i = 2; i <= n; ++i) {
      if (at(i) < 0x80 || at(i) > 0xbf) return 0;
    }
    return n + 1;
  }

  const char* const begin_;
  const char* const end_;
  Builder& b_;
  uint32_t maps_ = 0;
  std::string error_;
  // Unescaped strings; not value-initialised, as only what is written is read.
  std::array<char, kMaxLoadReportBytes> arena_;
  size_t used_ = 0;
};

}  // namespace

bool ScanJson(std::string_view body, Builder& b, std::string* why) {
  JsonScanner scan(body, b);
  if (scan.Run()) return true;
  *why = scan.error();
  return false;
}

}  // namespace weighted::load_report_internal
