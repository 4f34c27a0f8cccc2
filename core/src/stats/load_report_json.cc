// The JSON form of a load report, scanned in one pass (see JsonScanner).
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
class JsonScanner {
 public:
  JsonScanner(std::string_view body, Builder& b)
      : begin_(body.data()), end_(body.data() + body.size()), p_(begin_), b_(b) {}

  bool Run() {
    Ws();
    if (p_ == end_) return Syntax("an object");
    if (*p_ != '{') {
      if (*p_ == '[') return Fail(p_, "arrays are not part of a load report");
      return Fail(p_, "the report must be a JSON object");
    }
    if (!Members(/*map=*/Field::kUnknown, {})) return false;
    Ws();
    return p_ == end_ || Syntax("the end after the object");
  }
  const std::string& error() const { return error_; }

 private:
  static bool IsWs(char c) {
    constexpr uint64_t kWs = 1ull << ' ' | 1ull << '\t' | 1ull << '\n' | 1ull << '\r';
    return static_cast<unsigned char>(c) <= ' ' && (kWs >> static_cast<unsigned char>(c) & 1);
  }
  void Ws() {
    const char* q = p_;
    // Before ':' and ',' there is usually nothing to skip: one compare says so.
    while (q < end_ && static_cast<unsigned char>(*q) <= ' ' && IsWs(*q)) ++q;
    p_ = q;
  }

  // The messages are made out of line: the scanning functions then keep their registers for
  // the scan instead of saving them for a format call on every entry.
  [[gnu::cold, gnu::noinline]] bool Syntax(std::string_view expected) {
    error_ = fmt::format("not JSON at byte {} of the object: expected {}, found {}", p_ - begin_,
                         expected, p_ == end_ ? "the end" : Shown(std::string_view(p_, 1)));
    return false;
  }
  [[gnu::cold, gnu::noinline]] bool Fail(const char* at, std::string_view why) {
    error_ = fmt::format("{} (byte {} of the object)", why, at - begin_);
    return false;
  }

  // An object at p_ ('{'): the report itself when `map` is kUnknown, else the entries of the
  // map field `map` (spelled `group`).
  bool Members(Field map, std::string_view group) {
    ++p_;
    Ws();
    if (p_ < end_ && *p_ == '}') return ++p_, true;
    for (;;) {
      if (p_ == end_ || *p_ != '"') return Syntax("a name in double quotes");
      const char* const name_at = p_;
      std::string_view name;
      Field known = map == Field::kUnknown ? KnownName(&name) : Field::kUnknown;
      if (known == Field::kUnknown && !String(&name)) return false;
      Ws();
      if (p_ == end_ || *p_ != ':') return Syntax("':' after the name");
      ++p_;
      Ws();
      if (map == Field::kUnknown) {
        if (!Field1(name_at, name, known)) return false;
      } else {
        const char* const at = p_;
        double v = 0;
        if (!Value(&v, "nested objects are not part of a load report")) return false;
        if (!b_.AddEntry(map, name, v)) [[unlikely]] return EntryRefused(at, group, name);
      }
      Ws();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        Ws();
        continue;
      }
      if (p_ < end_ && *p_ == '}') return ++p_, true;
      return Syntax("',' or '}'");
    }
  }

  // A field's proto name at p_, quotes and all, matched without scanning the string first (the
  // common case, as in MatchText): one candidate per first letter (two for 'r'), compared at a
  // constant length, which the compiler turns into a few word compares. kUnknown: not one of
  // them, or spelled another way (escapes, lowerCamelCase), which String() and FieldOf() take.
  Field KnownName(std::string_view* name) {
    if (end_ - p_ < 2) return Field::kUnknown;
    const char* const at = p_;
    Field f = Field::kUnknown;
    switch (p_[1]) {
      case 'c': f = Is("cpu_utilization\"") ? Field::kCpu : f; break;
      case 'm': f = Is("mem_utilization\"") ? Field::kMemory : f; break;
      case 'n': f = Is("named_metrics\"") ? Field::kNamed : f; break;
      case 'e': f = Is("eps\"") ? Field::kEps : f; break;
      case 'u': f = Is("utilization\"") ? Field::kUtilization : f; break;
      case 'a': f = Is("application_utilization\"") ? Field::kApplication : f; break;
      case 'r':
        f = Is("rps_fractional\"") ? Field::kRpsFractional
            : Is("rps\"")          ? Field::kRps
            : Is("request_cost\"") ? Field::kRequestCost
                                   : f;
        break;
      default: break;
    }
    if (f != Field::kUnknown) *name = std::string_view(at + 1, p_ - at - 2);
    return f;
  }
  // Whether the opening quote at p_ is followed by `quoted` (a name and its closing quote); if
  // so, p_ moves past it.
  template <size_t N>
  bool Is(const char (&quoted)[N]) {
    constexpr size_t n = N - 1;
    if (size_t(end_ - p_) <= n || std::memcmp(p_ + 1, quoted, n) != 0) return false;
    p_ += n + 1;
    return true;
  }

  // One member of the report: a standard field and its number, or a map and its object.
  bool Field1(const char* name_at, std::string_view name, Field known) {
    const Field field = known != Field::kUnknown ? known : FieldOf(name);
    if (field == Field::kUnknown) [[unlikely]] return NotAField(name_at, name);
    const char* const at = p_;
    if (IsMap(field)) {
      if (p_ == end_ || *p_ != '{') [[unlikely]] return NotAnObject(at, name);
      const uint32_t bit = 1u << int(field);
      if (maps_ & bit) [[unlikely]] return MapTwice(name_at, name);
      maps_ |= bit;
      return Members(field, name);
    }
    double v = 0;
    if (!Value(&v, "only named_metrics, utilization and request_cost are objects")) return false;
    if (!b_.AddScalar(field, v)) [[unlikely]] return Refused(at, name);
    return true;
  }

  [[gnu::cold, gnu::noinline]] bool NotAField(const char* name_at, std::string_view name) {
    return Fail(name_at, fmt::format("{} is not a field of an ORCA load report", Shown(name)));
  }
  [[gnu::cold, gnu::noinline]] bool NotAnObject(const char* at, std::string_view name) {
    double ignored;
    if (!OtherValue(&ignored, "")) return false;  // what it is instead, if that is refused
    return Fail(at, fmt::format("{} must be an object", name));
  }
  [[gnu::cold, gnu::noinline]] bool MapTwice(const char* name_at, std::string_view name) {
    return Fail(name_at, fmt::format("{} appears twice", name));
  }
  [[gnu::cold, gnu::noinline]] bool Refused(const char* at, std::string_view name) {
    return Fail(at, fmt::format("{} {}", name, b_.why()));
  }
  [[gnu::cold, gnu::noinline]] bool EntryRefused(const char* at, std::string_view group,
                                                 std::string_view name) {
    return Fail(at, fmt::format("{}.{} {}", group, Shown(name), b_.why()));
  }

  // A value that must be a number: a JSON number or a string holding one. `object` is why an
  // object is refused here.
  bool Value(double* v, const char* object) {
    if (p_ < end_ && ((*p_ >= '0' && *p_ <= '9') || *p_ == '-')) [[likely]] return Number(v);
    return OtherValue(v, object);
  }
  // The rest: a number in a string, or what is refused in its place.
  [[gnu::noinline]] bool OtherValue(double* v, const char* object) {
    if (p_ == end_) return Syntax("a value");
    const char* const at = p_;
    switch (*p_) {
      case '"': {
        std::string_view s;
        if (!String(&s)) return false;
        const auto [e, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
        if (s.empty() || ec != std::errc() || e != s.data() + s.size()) {
          return Fail(at, fmt::format("the string {} is not a number", Shown(s)));
        }
        return true;
      }
      case '{': return Fail(at, *object ? object : "an object is not a number");
      case '[': return Fail(at, "arrays are not part of a load report");
      case 'n': return Literal("null") && Fail(at, "null is not a number");
      case 't': return Literal("true") && Fail(at, "a boolean is not a number");
      case 'f': return Literal("false") && Fail(at, "a boolean is not a number");
      default: return Number(v);
    }
  }

  bool Literal(std::string_view word) {
    if (size_t(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) {
      return Syntax("a value");
    }
    p_ += word.size();
    return true;
  }

  // A number at p_ ('-' or a digit). The usual one (an integer part without a leading zero,
  // maybe a fraction, no exponent, at most 19 digits whose value is at most 2^53) is read here
  // in one pass and divided by an exact power of ten: Clinger's fast path, correctly rounded, so
  // the value from_chars would give. Anything else is read again by NumberInFull.
  bool Number(double* v) {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                        1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                        1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    const char* q = p_;
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
      if (frac == 0) [[unlikely]] return NumberInFull(v);
    }
    if (ints == 0 || (*first == '0' && ints > 1) || ints + frac > 19 || m > (uint64_t{1} << 53) ||
        (q < end && (*q | 0x20) == 'e')) [[unlikely]] {
      return NumberInFull(v);
    }
    *v = double(m) / kPow10[frac];
    if (negative) *v = -*v;
    p_ = q;
    return true;
  }

  // JSON's number grammar in full, with its errors; up to 15 significant digits and no exponent
  // still take the fast path, the rest goes to from_chars over the span just checked.
  [[gnu::noinline]] bool NumberInFull(double* v) {
    static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    // A local cursor: p_ is a member, and the compiler would store it at every step.
    const char* const start = p_;
    const char* q = p_;
    const char* const end = end_;
    const bool negative = *q == '-';
    if (negative) ++q;
    const auto digit = [&] { return q < end && *q >= '0' && *q <= '9'; };
    const auto syntax = [&](std::string_view expected) {
      p_ = q;
      return Syntax(expected);
    };
    if (!digit()) return syntax("a value");
    uint64_t m = 0;
    int digits = 0, frac = 0;
    if (*q == '0') {
      ++q;
    } else {
      for (; digit(); ++q, ++digits) m = m * 10 + uint64_t(*q - '0');
    }
    if (q < end && *q == '.') {
      ++q;
      if (!digit()) return syntax("a digit after the decimal point");
      for (; digit(); ++q, ++frac) m = m * 10 + uint64_t(*q - '0');
      digits += frac;
    }
    bool exponent = false;
    if (q < end && (*q == 'e' || *q == 'E')) {
      exponent = true;
      ++q;
      if (q < end && (*q == '+' || *q == '-')) ++q;
      if (!digit()) return syntax("a digit in the exponent");
      while (digit()) ++q;
    }
    p_ = q;
    if (!exponent && digits <= 15) {
      *v = frac == 0 ? double(m) : double(m) / kPow10[frac];
      if (negative) *v = -*v;
      return true;
    }
    const auto [e, ec] = std::from_chars(start, p_, *v);
    if (ec == std::errc::result_out_of_range) {
      // Beyond a double either way: too small is 0, too large is refused as not finite.
      const char* x = start;
      while (x < p_ && *x != 'e' && *x != 'E') ++x;
      const bool tiny = x + 1 < p_ && x[1] == '-';
      *v = tiny ? 0.0 : HUGE_VAL;
      if (negative) *v = -*v;
      return true;
    }
    return ec == std::errc() && e == p_ ? true : Fail(start, "the number is not a double");
  }

  // A string at p_ (its opening quote), up to and past its closing one. Its content is a view
  // into the body, or unescaped into arena_ when it has a backslash. UTF-8 is checked: JSON text
  // is UTF-8, and a name goes into messages.
  // Bytes a string takes as they are: printable ASCII but the quote and the backslash.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
    return t;
  }();

  bool String(std::string_view* out) {
    const char* const open = p_++;
    const char* const first = p_;
    char* w = nullptr;  // where unescaped bytes go once there is an escape
    for (;;) {
      const char* const run = p_;
      const char* q = p_;
      while (q < end_ && kPlain[static_cast<unsigned char>(*q)]) ++q;
      p_ = q;
      if (w) {
        std::memcpy(w, run, p_ - run);
        w += p_ - run;
      }
      if (p_ == end_) {
        p_ = open;
        return Syntax("a string closed by '\"'");
      }
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') break;
      if (c < 0x20) return Fail(p_, "a control character inside a string must be escaped");
      if (c == '\\') {
        if (!w) {
          w = arena_.data() + used_;
          std::memcpy(w, first, p_ - first);
          w += p_ - first;
        }
        if (!Escape(&w)) return false;
        continue;
      }
      const char* const from = p_;  // c >= 0x80
      if (!Utf8()) return Fail(from, "a string is not UTF-8");
      if (w) {
        std::memcpy(w, from, p_ - from);
        w += p_ - from;
      }
    }
    if (w) {
      char* const s = arena_.data() + used_;
      *out = std::string_view(s, w - s);
      used_ += w - s;
    } else {
      *out = std::string_view(first, p_ - first);
    }
    ++p_;  // the closing quote
    return true;
  }

  // One escape at p_ ('\'), written at *w.
  bool Escape(char** w) {
    const char* const at = p_;
    if (end_ - p_ < 2) return Fail(at, "an escape is cut short");
    const char e = p_[1];
    p_ += 2;
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
      return true;
    }
    uint32_t cp = 0;
    if (!Hex4(&cp)) return Fail(at, "\\u needs four hex digits");
    if (cp >= 0xdc00 && cp <= 0xdfff) return Fail(at, "a lone low surrogate");
    if (cp >= 0xd800 && cp <= 0xdbff) {
      uint32_t low = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return Fail(at, "a lone high surrogate");
      p_ += 2;
      if (!Hex4(&low) || low < 0xdc00 || low > 0xdfff) return Fail(at, "a lone high surrogate");
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
    return true;
  }

  bool Hex4(uint32_t* cp) {
    if (end_ - p_ < 4) return false;
    for (int i = 0; i < 4; ++i, ++p_) {
      const char c = *p_;
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      *cp = *cp << 4 | uint32_t(d);
    }
    return true;
  }

  // One multi-byte UTF-8 sequence at p_ (RFC 3629: no overlongs, surrogates or past U+10FFFF).
  bool Utf8() {
    const auto at = [&](ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
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
      return false;
    }
    if (end_ - p_ <= n) return false;
    if (at(1) < lo || at(1) > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if (at(i) < 0x80 || at(i) > 0xbf) return false;
    }
    p_ += n + 1;
    return true;
  }

  const char* const begin_;
  const char* const end_;
  const char* p_;
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
