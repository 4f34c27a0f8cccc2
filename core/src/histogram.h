// Latency histogram with bounded relative error, split into a lock-free recorder (written by
// report() on any thread) and sparse per-cycle samples (owned by the controller).
//
// Buckets are logarithmic with 20 per octave: a bucket spans a factor 2^(1/20) = 1.0353, so the
// geometric midpoint is within 1.75% of any value in it (the issue asks for at most 2%). Values
// are microseconds; the range is 1 us to 2^28 us (~4.5 min); values outside are clamped to the
// edge buckets (reports above limits.max_latency_ms are rejected before they get here).
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace weighted {

inline constexpr int kBucketsPerOctave = 20;
inline constexpr int kOctaves = 28;
inline constexpr int kBucketCount = kBucketsPerOctave * kOctaves;  // 560
inline constexpr int kTouchedWords = (kBucketCount + 63) / 64;

inline int BucketOf(double micros) {
  if (!(micros > 1.0)) return 0;
  int b = static_cast<int>(std::log2(micros) * kBucketsPerOctave);
  return b < kBucketCount ? b : kBucketCount - 1;
}

// The representative value (geometric midpoint) of a bucket, in microseconds.
inline double BucketValue(int bucket) {
  return std::exp2((bucket + 0.5) / kBucketsPerOctave);
}

// One (bucket, count) pair; a cycle's histogram keeps only non-empty buckets, sorted.
using SparseHistogram = std::vector<std::pair<uint16_t, uint32_t>>;

// Written concurrently by reporters, drained by the controller. A bitmap of touched buckets keeps
// the drain proportional to the buckets actually used, not to kBucketCount.
class AtomicHistogram {
 public:
  void Record(int bucket) {
    counts_[bucket].fetch_add(1, std::memory_order_seq_cst);
    // seq_cst pairs with Drain(): an increment that lands after Drain() took the bucket's count
    // either sees the cleared bit (and sets it again for the next drain) or was taken.
    auto& word = touched_[bucket >> 6];
    const uint64_t bit = uint64_t{1} << (bucket & 63);
    if (!(word.load(std::memory_order_seq_cst) & bit)) word.fetch_or(bit, std::memory_order_seq_cst);
  }

  // Moves every count recorded so far into `out` (appended, sorted by bucket).
  void Drain(SparseHistogram* out) {
    for (int w = 0; w < kTouchedWords; ++w) {
      uint64_t bits = touched_[w].exchange(0, std::memory_order_seq_cst);
      while (bits) {
        int b = w * 64 + __builtin_ctzll(bits);
        bits &= bits - 1;
        uint32_t c = counts_[b].exchange(0, std::memory_order_seq_cst);
        if (c) out->emplace_back(static_cast<uint16_t>(b), c);
      }
    }
  }

 private:
  std::array<std::atomic<uint32_t>, kBucketCount> counts_{};
  std::array<std::atomic<uint64_t>, kTouchedWords> touched_{};
};

// Quantile q in [0, 1] over a set of sparse histograms, in microseconds; 0 when empty.
double Quantile(const std::vector<const SparseHistogram*>& parts, double q);

}  // namespace weighted
