#include "stats/quantiles.h"

#include <algorithm>

namespace weighted {

namespace {
// ceil(q x total), at least 1, without a libm call.
uint64_t RankOf(double q, uint64_t total) {
  const double x = q * double(total);
  uint64_t r = static_cast<uint64_t>(x);
  r += double(r) < x;
  return r ? r : 1;
}
}  // namespace

void Quantiles(const SparseHistogram* const* parts, size_t count, const double* qs, double* out,
               int n) {
  for (size_t p = 0; p < count; ++p) {
    if (!std::is_sorted(parts[p]->begin(), parts[p]->end())) {
      // Not as Drain() leaves them: merge into one sorted copy.
      SparseHistogram merged;
      for (size_t q = 0; q < count; ++q) merged.insert(merged.end(), parts[q]->begin(), parts[q]->end());
      std::sort(merged.begin(), merged.end());
      const SparseHistogram* one = &merged;
      QuantilesOfSorted(&one, 1, qs, out, n);
      return;
    }
  }
  QuantilesOfSorted(parts, count, qs, out, n);
}

void QuantilesOfSorted(const SparseHistogram* const* parts, size_t count, const double* qs,
                       double* out, int n, uint64_t total) {
  for (int k = 0; k < n; ++k) out[k] = 0;
  if (total == 0) {
    for (size_t p = 0; p < count; ++p) {
      for (BucketEntry e : *parts[p]) total += EntryCount(e);
    }
  }
  if (total == 0) return;
  // The rank of each q-quantile, 1-based: the smallest value with at least q x total at or
  // below it. The window's quantiles are the upper ones (p95, p99), so the walk goes down from
  // the top bucket: it visits only the buckets above the lowest quantile asked for. It merges
  // the parts on the fly (a k-way merge; k is the window's slots, 2 by default).
  uint64_t rank[8];
  int order[8];  // indexes into qs, largest q first
  if (n > 8) n = 8;
  for (int k = 0; k < n; ++k) {
    rank[k] = RankOf(qs[k], total);
    order[k] = k;
  }
  for (int i = 1; i < n; ++i) {  // insertion sort: n is 1 or 2
    for (int j = i; j > 0 && rank[order[j]] > rank[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  }
  constexpr size_t kInline = 16;
  size_t inline_pos[kInline];
  std::vector<size_t> heap_pos(count > kInline ? count : 0);
  size_t* pos = count > kInline ? heap_pos.data() : inline_pos;  // one past the next pair
  for (size_t p = 0; p < count; ++p) pos[p] = parts[p]->size();
  uint64_t above = 0;  // records in the buckets already walked (all above the current one)
  int k = 0;
  while (k < n) {
    size_t best = count;
    for (size_t p = 0; p < count; ++p) {
      if (pos[p] > 0 &&
          (best == count || (*parts[p])[pos[p] - 1] > (*parts[best])[pos[best] - 1])) {
        best = p;
      }
    }
    if (best == count) break;
    const BucketEntry e = (*parts[best])[--pos[best]];
    const int b = EntryBucket(e);
    above += EntryCount(e);
    // Records at or below this bucket's lower neighbours: total - above. The quantile is this
    // bucket once fewer than `rank` records lie strictly below it.
    while (k < n && total - above < rank[order[k]]) out[order[k++]] = BucketValue(b);
  }
}

void UpperQuantilesOfTwo(const SparseHistogram* a, const SparseHistogram* b, uint64_t total,
                         double* p95, double* p99) {
  *p95 = *p99 = 0;
  if (total == 0) return;
  const uint64_t r99 = RankOf(0.99, total), r95 = RankOf(0.95, total);
  const BucketEntry* ab = a ? a->data() : nullptr;
  const BucketEntry* bb = b ? b->data() : nullptr;
  const BucketEntry* ai = a ? ab + a->size() : nullptr;  // one past the next entry, walking down
  const BucketEntry* bi = b ? bb + b->size() : nullptr;
  uint64_t above = 0;
  bool have99 = false;
  // The same walk as QuantilesOfSorted: down from the top bucket until fewer than `rank`
  // records lie strictly below the current one. `total` is the parts' record count, so the
  // walk ends inside them.
  while (ai != ab || bi != bb) {
    const BucketEntry e = ai != ab && (bi == bb || ai[-1] >= bi[-1]) ? *--ai : *--bi;
    above += EntryCount(e);
    const uint64_t below = total > above ? total - above : 0;
    if (!have99 && below < r99) {
      *p99 = BucketValue(EntryBucket(e));
      have99 = true;
    }
    if (below < r95) {
      *p95 = BucketValue(EntryBucket(e));
      return;
    }
  }
}

double Quantile(const std::vector<const SparseHistogram*>& parts, double q) {
  double out = 0;
  Quantiles(parts.data(), parts.size(), &q, &out, 1);
  return out;
}

}  // namespace weighted
