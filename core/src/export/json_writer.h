// A JSON text writer for the engine's snapshot. Building the snapshot as a nlohmann DOM cost
// ~50 us of CPU per endpoint (a std::map and a dozen allocations per object; 540 ms for 10 000
// endpoints, for a dashboard that polls every second); writing the text straight into one
// string costs a few microseconds. The output is the same JSON: numbers in the shortest form
// that reads back exactly, doubles always with a fraction or exponent (as nlohmann writes them,
// so a reader that types 1.0 and 1 apart sees no change), non-finite doubles as null.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <new>
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
  explicit JsonWriter(std::string buffer) : str_(std::move(buffer)) { str_.clear(); }
  // Writes into memory from malloc, `reserve` bytes of it allocated at once and never zeroed,
  // which TakeMalloced() hands out as it is: the C ABI returns it to the caller (wt_free frees
  // it) without copying the text. At 100 000 endpoints the copy was a second 147 MB buffer,
  // every page of it faulted in fresh (glibc maps a block that large anew on every call).
  // `block` (optional): memory from malloc of `capacity` bytes to write into, now the writer's.
  struct Malloced {
    size_t reserve;
    char* block = nullptr;
    size_t capacity = 0;
  };
  explicit JsonWriter(Malloced m) : malloced_(true) {
    buf_ = m.block;
    cap_ = m.block ? m.capacity : 0;
    if (cap_ < std::max<size_t>(m.reserve, 64)) Reallocate(std::max<size_t>(m.reserve, 64));
  }
  ~JsonWriter() {
    if (malloced_) std::free(buf_);
  }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }

  // The next value belongs to `key` (inside an object). A literal key is the code's own and
  // needs no escape: copied without the scan (a snapshot has ~90 keys per endpoint).
  template <size_t N>
  JsonWriter& Key(const char (&key)[N]) {
    Need(N + 3);
    char* p = Separated();
    *p = '"';
    std::memcpy(p + 1, key, N - 1);
    p[N] = '"';
    p[N + 1] = ':';
    after_key_ = true;
    return Wrote(p + N + 2);
  }
  JsonWriter& Key(std::string_view key) {
    Need(2);
    Separate();
    Quoted(key);
    Need(1);
    Put(':');
    after_key_ = true;
    return *this;
  }

  JsonWriter& String(std::string_view s) {
    Need(1);
    Separate();
    Quoted(s);
    return *this;
  }
  // A key or a string value from the code's own tables (state, metric, outcome and resource
  // names): plain ASCII words, copied without the escape scan (a snapshot writes ~20 of them
  // per endpoint).
  JsonWriter& CodeKey(std::string_view key) {
    assert(PlainPrefix(key) == key.size());
    Need(key.size() + 4);
    char* p = QuotedPlain(Separated(), key);
    *p = ':';
    after_key_ = true;
    return Wrote(p + 1);
  }
  JsonWriter& CodeString(std::string_view s) {
    assert(PlainPrefix(s) == s.size());
    Need(s.size() + 3);
    return Wrote(QuotedPlain(Separated(), s));
  }
  JsonWriter& Bool(bool b) { return Raw(b ? std::string_view("true", 4) : std::string_view("false", 5)); }
  JsonWriter& Null() { return Raw("null"); }
  // Numbers are formatted straight into the buffer: through a back_inserter, fmt appends
  // character by character, and a snapshot of 1 000 endpoints has some 40 000 numbers.
  JsonWriter& Int(int64_t v) { return Number(v); }
  JsonWriter& Uint(uint64_t v) { return Number(v); }
  JsonWriter& Double(double v) {
    if (!std::isfinite(v)) return Null();
    Need(kMaxNumber + 3);
    Separate();
    // Most of a snapshot's doubles are whole (weights, zeros): written as integers, the text
    // fmt's shortest form gives them below 1e15 (digits, no exponent), without its search.
    if (v == std::trunc(v) && std::fabs(v) < 1e15) {
      char* p = At();
      *p = '-';
      p += v == 0 && std::signbit(v);
      p = fmt::format_to(p, FMT_COMPILE("{}"), static_cast<int64_t>(v));
      p[0] = '.';
      p[1] = '0';
      return Wrote(p + 2);
    }
    // The rest go through a memo of the texts last written: a snapshot repeats many of its
    // fractions (a rule's threshold in every endpoint, latency quantiles that are histogram
    // bucket values, shares of equal weights), and the shortest-form search costs ~400
    // instructions where a hit copies a few bytes. The memo holds fmt's own text for the same
    // bits, so the output is the same either way.
    // A short text (one endpoint's part) does not pay for the memo: it starts after 64 numbers.
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    MemoEntry* m = nullptr;
    if (memo_) [[likely]] {
      m = &memo_[((bits ^ (bits >> 31)) * 0x9E3779B97F4A7C15ull) >> (64 - kMemoBits)];
      if (m->bits == bits) {
        Put(m->text, m->len);
        return *this;
      }
    } else if (++unmemoized_ == 64) {
      memo_ = std::make_unique<MemoEntry[]>(kMemoSize);  // bits 0 is 0.0: never looked up here
    }
    // A compiled format: the same text as "{}" without parsing the format string per number.
    char* begin = At();
    char* end = fmt::format_to(begin, FMT_COMPILE("{}"), v);
    n_ += size_t(end - begin);
    if (std::string_view(begin, size_t(end - begin)).find_first_of(".e") == std::string_view::npos) {
      Put(".0", 2);
    }
    const size_t len = size_t(At() - begin);
    if (m && len <= sizeof m->text) {
      m->bits = bits;
      m->len = static_cast<uint8_t>(len);
      std::memcpy(m->text, begin, len);
    }
    return *this;
  }

  // A value that is JSON already (an event's reason, made by the engine).
  JsonWriter& Json(std::string_view json) { return Raw(json); }

  void Reserve(size_t bytes) {
    if (malloced_) {
      if (bytes > cap_) Reallocate(bytes);
      return;
    }
    str_.reserve(bytes);
    buf_ = str_.data();  // the string may have moved; its size (cap_) has not changed
  }
  // The text so far; the writer starts again, empty. A malloced writer copies it out.
  std::string Take() {
    std::string text;
    if (malloced_) {
      text.assign(buf_, n_);
    } else {
      str_.resize(n_);
      text = std::move(str_);
      str_ = std::string();
      buf_ = nullptr;
      cap_ = 0;
    }
    n_ = 0;
    first_ = true;
    after_key_ = false;
    return text;
  }
  // A malloced writer's text, NUL-terminated, in memory the caller frees with std::free; its
  // length in *len. The writer is left empty, without a buffer (it allocates anew when used).
  char* TakeMalloced(size_t* len) {
    assert(malloced_);
    Need(1);
    buf_[n_] = '\0';
    // Not shrunk to the text: pages reserved and never written cost no memory, and glibc sizes
    // its next heap-or-map choice by the block freed last (its dynamic mmap threshold, up to
    // 32 MB): a block shrunk below the next reservation made every snapshot of 10 000
    // endpoints map and fault in 17 MB afresh, where one freed whole is reused from the heap.
    char* text = buf_;
    *len = n_;
    buf_ = nullptr;
    cap_ = n_ = 0;
    first_ = true;
    after_key_ = false;
    return text;
  }

 private:
  // The longest number fmt writes: "-1.2345678901234567e-308" (24) or a 20-digit integer.
  static constexpr size_t kMaxNumber = 32;
  static constexpr int kMemoBits = 9;
  static constexpr size_t kMemoSize = size_t{1} << kMemoBits;
  struct MemoEntry {
    uint64_t bits;
    uint8_t len;
    char text[31];  // the longest double fmt writes, 24, and ".0"
  };

  // The text is kept in a buffer larger than it (resized ahead, written in place), so that
  // each character is a store, not a std::string append with its capacity check and length
  // update.
  char* At() { return buf_ + n_; }
  void Need(size_t more) {
    if (cap_ - n_ < more) [[unlikely]] Grow(more);
  }
  [[gnu::noinline]] void Grow(size_t more) {
    if (malloced_) {
      // Doubling: a block glibc mapped on its own grows by mremap, without a copy.
      Reallocate(std::max(n_ + more, 2 * cap_));
      return;
    }
    // At most 1 MiB ahead: every byte resized is zeroed now, so a step far past the text would
    // fault in pages it never reaches (doubling inside a snapshot's reserved capacity could
    // zero up to twice the text). Past the capacity, std::string's own doubling keeps the
    // reallocations amortised.
    str_.resize(n_ + more + std::min(std::max(str_.size(), size_t{256}), size_t{1} << 20));
    buf_ = str_.data();
    cap_ = str_.size();
  }
  void Reallocate(size_t bytes) {
    char* p = static_cast<char*>(std::realloc(buf_, bytes));
    if (!p) throw std::bad_alloc();
    buf_ = p;
    cap_ = bytes;
  }
  void Put(char c) { buf_[n_++] = c; }
  void Put(const char* s, size_t len) {
    std::memcpy(At(), s, len);
    n_ += len;
  }

  JsonWriter& Open(char c) {
    Need(2);
    char* p = Separated();
    *p = c;
    first_ = true;
    return Wrote(p + 1);
  }
  JsonWriter& Close(char c) {
    Need(1);
    Put(c);
    first_ = false;
    return *this;
  }
  JsonWriter& Raw(std::string_view text) {
    Need(text.size() + 1);
    char* p = Separated();
    std::memcpy(p, text.data(), text.size());
    return Wrote(p + text.size());
  }
  // A comma before every element but the first of its container, and none after a key. Callers
  // have made room for it.
  void Separate() {
    if (after_key_) {
      after_key_ = false;
    } else if (!first_) {
      Put(',');
    }
    first_ = false;
  }
  template <typename T>
  JsonWriter& Number(T v) {
    Need(kMaxNumber + 1);
    return Wrote(fmt::format_to(Separated(), FMT_COMPILE("{}"), v));
  }
  // Strings here are valid UTF-8 (ids and names are checked on the way in), so only quotes,
  // backslashes and control characters need escapes.
  static bool NeedsEscape(unsigned char c) { return c == '"' || c == '\\' || c < 0x20; }
  // The length of the prefix without an escape, eight bytes at a time: a word holding a byte
  // below 0x20, a '"' or a '\\' is found by the zero-byte test (Mycroft's: exact as a yes or no;
  // UTF-8 bytes, >= 0x80, never pass it), then scanned byte by byte.
  static size_t PlainPrefix(std::string_view s) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t x;
      std::memcpy(&x, s.data() + i, 8);
      const uint64_t q = x ^ (kOnes * '"'), b = x ^ (kOnes * '\\');
      if ((((x - kOnes * 0x20) & ~x) | ((q - kOnes) & ~q) | ((b - kOnes) & ~b)) & kHigh) break;
    }
    while (i < s.size() && !NeedsEscape(static_cast<unsigned char>(s[i]))) ++i;
    return i;
  }
  // Character stores may alias any member, so the writers below keep the cursor in a local
  // and store n_ once (Wrote), instead of a load and store of n_ around every character.
  static char* QuotedPlain(char* p, std::string_view s) {
    *p = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    return p + s.size() + 2;
  }
  // Where the next element starts: after a comma unless it is its container's first or a key's
  // value. Callers have made room for the comma.
  char* Separated() {
    const bool comma = !after_key_ && !first_;
    after_key_ = false;
    first_ = false;
    char* p = At();
    *p = ',';
    return p + comma;
  }
  JsonWriter& Wrote(char* end) {
    n_ = size_t(end - buf_);
    return *this;
  }
  void Quoted(std::string_view s) {
    Need(s.size() * 6 + 2);  // every byte a \u00XX at worst
    Put('"');
    // Runs without an escape (all of an id or a key, as a rule) are copied at once.
    size_t run = PlainPrefix(s);
    Put(s.data(), run);
    for (unsigned char c : s.substr(run)) {
      switch (c) {
        case '"': Put("\\\"", 2); break;
        case '\\': Put("\\\\", 2); break;
        case '\n': Put("\\n", 2); break;
        case '\r': Put("\\r", 2); break;
        case '\t': Put("\\t", 2); break;
        default:
          if (c < 0x20) n_ += size_t(fmt::format_to(At(), "\\u{:04x}", c) - At());
          else Put(static_cast<char>(c));
      }
    }
    Put('"');
  }

  // The text lives in buf_[0, n_), within cap_ writable bytes: str_'s (sized ahead) or a block
  // from malloc (malloced_).
  char* buf_ = nullptr;
  size_t cap_ = 0;
  bool malloced_ = false;
  std::string str_;
  std::unique_ptr<MemoEntry[]> memo_;
  int unmemoized_ = 0;
  size_t n_ = 0;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace weighted
