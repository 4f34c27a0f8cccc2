// Latency histogram with bounded relative error, split into a lock-free recorder (written by
// report() on any thread) and sparse per-cycle samples (owned by the controller).
//
// Buckets are logarithmic with 20 per octave: a bucket spans a factor 2^(1/20) = 1.0353, so the
// geometric midpoint is within 1.75% of any value in it (the quantile error budget is 2%). Values
// are microseconds; the range is 1 us to 2^28 us (~4.5 min); values outside are clamped to the
// edge buckets (reports above limits.max_latency_ms are rejected before they get here).
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace weighted {

inline constexpr int kBucketsPerOctave = 20;
inline constexpr int kOctaves = 28;
inline constexpr int kBucketCount = kBucketsPerOctave * kOctaves;  // 560
inline constexpr int kTouchedWords = (kBucketCount + 63) / 64;

namespace histogram_detail {
// BucketOf without a libm call: the double's exponent is the octave; the top 8 mantissa bits
// index a table giving the sub-bucket at the start of that 1/256-wide interval, and one compare
// against the next bucket's lower edge settles an interval that straddles an edge (sub-buckets
// are at least 0.035 wide, so an interval holds at most one edge). Edges are exp2(k / 20).
struct Tables {
  static constexpr int kLutBits = 8;
  uint8_t lut[1 << kLutBits];
  uint64_t edge[kBucketsPerOctave + 1];  // mantissa field of exp2(k / 20); edge[20] = 2^52
  double value[kBucketCount];  // BucketValue(): the cycle asks for two per endpoint
  Tables() {
    for (int b = 0; b < kBucketCount; ++b) value[b] = std::exp2((b + 0.5) / kBucketsPerOctave);
    for (int k = 0; k < kBucketsPerOctave; ++k) {
      edge[k] = std::bit_cast<uint64_t>(std::exp2(double(k) / kBucketsPerOctave)) & kFrac;
    }
    edge[kBucketsPerOctave] = kFrac + 1;
    for (int t = 0; t < (1 << kLutBits); ++t) {
      const uint64_t m = uint64_t(t) << (52 - kLutBits);
      int k = 0;
      while (k + 1 < kBucketsPerOctave && m >= edge[k + 1]) ++k;
      lut[t] = static_cast<uint8_t>(k);
    }
  }
  static constexpr uint64_t kFrac = (uint64_t{1} << 52) - 1;
};
inline const Tables kTables;
}  // namespace histogram_detail

inline int BucketOf(double micros) {
  if (!(micros > 1.0)) return 0;
  using histogram_detail::kTables;
  const uint64_t bits = std::bit_cast<uint64_t>(micros);
  const int octave = static_cast<int>(bits >> 52) - 1023;  // >= 0: micros > 1
  if (octave >= kOctaves) return kBucketCount - 1;
  const uint64_t frac = bits & histogram_detail::Tables::kFrac;
  int sub = kTables.lut[frac >> (52 - histogram_detail::Tables::kLutBits)];
  sub += frac >= kTables.edge[sub + 1];
  return octave * kBucketsPerOctave + sub;
}

// The representative value (geometric midpoint) of a bucket, in microseconds.
inline double BucketValue(int bucket) { return histogram_detail::kTables.value[bucket]; }

// One non-empty bucket of a cycle's histogram, packed in 32 bits: the bucket in the top 10, its
// count in the low 22 (a larger count is split over several entries of the same bucket), so
// entries sort by bucket as plain integers. Half a (bucket, count) pair's 8 bytes: a window
// holds two cycles of 15-50 entries per endpoint, a large share of the 2 KiB per endpoint that
// the performance targets allow (docs/performance.md), and the quantile walk reads fewer lines.
using BucketEntry = uint32_t;
inline constexpr int kEntryCountBits = 22;
inline constexpr uint32_t kEntryMaxCount = (uint32_t{1} << kEntryCountBits) - 1;
static_assert(kBucketCount <= (1 << (32 - kEntryCountBits)));
inline BucketEntry MakeEntry(int bucket, uint32_t count) {
  return (static_cast<uint32_t>(bucket) << kEntryCountBits) | count;
}
inline int EntryBucket(BucketEntry e) { return static_cast<int>(e >> kEntryCountBits); }
inline uint32_t EntryCount(BucketEntry e) { return e & kEntryMaxCount; }

// A cycle's histogram: its non-empty buckets, sorted.
using SparseHistogram = std::vector<BucketEntry>;
// Appends `count` records of `bucket`, split as entries must be.
inline void AppendEntries(SparseHistogram* out, int bucket, uint64_t count) {
  for (; count > kEntryMaxCount; count -= kEntryMaxCount) {
    out->push_back(MakeEntry(bucket, kEntryMaxCount));
  }
  if (count) out->push_back(MakeEntry(bucket, static_cast<uint32_t>(count)));
}

// Written concurrently by reporters, drained by the controller. A bitmap of touched buckets keeps
// the drain proportional to the buckets actually used, not to kBucketCount.
//
// Counts live in one chunk per octave, allocated on the octave's first record: latencies of one
// endpoint span a few octaves, so an endpoint holds ~4 chunks (80 bytes each) instead of all
// 28 (2.2 KiB); that is most of the 2 KiB-per-endpoint budget (docs/performance.md). A chunk, once
// published, stays until the histogram is destroyed, so a recorder never sees it go.
class AtomicHistogram {
 public:
  AtomicHistogram() = default;
  ~AtomicHistogram() {
    for (auto& c : chunks_) delete c.load(std::memory_order_relaxed);
  }
  AtomicHistogram(const AtomicHistogram&) = delete;
  AtomicHistogram& operator=(const AtomicHistogram&) = delete;

  void Record(int bucket) {
    const int octave = bucket / kBucketsPerOctave;
    Chunk* c = chunks_[octave].load(std::memory_order_acquire);
    if (!c) [[unlikely]] c = AddChunk(octave);
    c->counts[bucket - octave * kBucketsPerOctave].fetch_add(1, std::memory_order_seq_cst);
    // seq_cst pairs with Drain(): an increment that lands after Drain() took the bucket's count
    // either sees the cleared bit (and sets it again for the next drain) or was taken.
    auto& word = touched_[bucket >> 6];
    const uint64_t bit = uint64_t{1} << (bucket & 63);
    if (!(word.load(std::memory_order_seq_cst) & bit)) word.fetch_or(bit, std::memory_order_seq_cst);
  }

  // Records not yet drained (for lifetime totals; not atomic with concurrent records).
  uint64_t Pending() const {
    uint64_t total = 0;
    for (int w = 0; w < kTouchedWords; ++w) {
      uint64_t bits = touched_[w].load(std::memory_order_relaxed);
      while (bits) {
        const int b = w * 64 + __builtin_ctzll(bits);
        bits &= bits - 1;
        const int octave = b / kBucketsPerOctave;
        if (const Chunk* chunk = chunks_[octave].load(std::memory_order_acquire)) {
          total += chunk->counts[b - octave * kBucketsPerOctave].load(std::memory_order_relaxed);
        }
      }
    }
    return total;
  }

  // Moves every count recorded so far into `out` (appended, sorted by bucket). Returns the
  // number of records moved.
  uint64_t Drain(SparseHistogram* out) {
    // Entries gather here and join `out` in one insert, which gives a vector short of room
    // exactly the room it needs (no doubling slack: the window keeps two of these per endpoint)
    // and spares a capacity check per entry. A bucket appears once per drain, so kBucketCount
    // entries suffice; a count too large for one entry goes straight to `out`, after the rest.
    std::array<BucketEntry, kBucketCount> gathered;
    size_t n = 0;
    uint64_t total = 0;
    for (int w = 0; w < kTouchedWords; ++w) {
      if (!touched_[w].load(std::memory_order_relaxed)) continue;  // no exchange for idle words
      for (uint64_t bits = touched_[w].exchange(0, std::memory_order_seq_cst); bits;
           bits &= bits - 1) {
        const int b = w * 64 + std::countr_zero(bits);
        const int octave = b / kBucketsPerOctave;
        Chunk* chunk = chunks_[octave].load(std::memory_order_acquire);  // set before the bit
        if (!chunk) continue;
        const uint32_t c =
            chunk->counts[b - octave * kBucketsPerOctave].exchange(0, std::memory_order_seq_cst);
        total += c;
        if (c > kEntryMaxCount) [[unlikely]] {
          out->insert(out->end(), gathered.data(), gathered.data() + n);
          n = 0;
          AppendEntries(out, b, c);
        } else if (c) {
          gathered[n++] = MakeEntry(b, c);
        }
      }
    }
    out->insert(out->end(), gathered.data(), gathered.data() + n);
    return total;
  }

 private:
  struct Chunk {
    std::array<std::atomic<uint32_t>, kBucketsPerOctave> counts{};
  };
  Chunk* AddChunk(int octave) {
    Chunk* fresh = new Chunk();
    Chunk* expected = nullptr;
    if (chunks_[octave].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
      return fresh;
    }
    delete fresh;  // another recorder published this octave first
    return expected;
  }

  std::array<std::atomic<uint64_t>, kTouchedWords> touched_{};
  std::array<std::atomic<Chunk*>, kOctaves> chunks_{};
};

}  // namespace weighted
