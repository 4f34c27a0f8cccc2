#include "stats.h"

#include <algorithm>
#include <cmath>

namespace weighted {

namespace {
constexpr double kMicro = 1e6;
}

void HotStats::Record(double latency_ms, int outcome) {
  // Latency statistics describe service time, so only answers that were served count. A fast
  // failure (refused, 5xx) would make a broken endpoint look fast and raise its healthy peers'
  // relative latency (Prequal's "sinkholing"); a timeout's latency is the client's deadline,
  // and the timeout already counts as an error.
  if (outcome != WT_OUTCOME_SUCCESS) {
    // A business error's count goes before its bucket: Drain() relies on that order.
    Count(outcome).fetch_add(1, std::memory_order_relaxed);
    if (outcome != WT_OUTCOME_BUSINESS_ERROR) return;
  }
  const double us = latency_ms * 1000.0;
  latency_sum_us_.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
  histogram_.Record(BucketOf(us));  // one bucket per served answer: its count is the latency count
}

void HotStats::RecordResources(const wt_resources& r) {
  const double values[kResources] = {r.cpu, r.memory, r.thread_pool, r.connection_pool};
  for (int i = 0; i < kResources; ++i) {
    if (!(r.present & (1u << i))) continue;
    resource_sum_[i].fetch_add(static_cast<uint64_t>(std::llround(values[i] * kMicro)),
                               std::memory_order_relaxed);
    resource_n_[i].fetch_add(1, std::memory_order_relaxed);
  }
}

void HotStats::Drain(CycleSample* out) {
  // A relaxed load first: an idle counter costs no locked exchange (a cycle drains every
  // endpoint, and most resource counters are never used).
  auto take = [](auto& a) { return a.load(std::memory_order_relaxed) ? a.exchange(0) : 0; };
  auto add = [](std::atomic<uint64_t>& a, uint64_t n) {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  };
  // The histogram before the counts. A business error counts itself before it records its
  // bucket (Record), so a bucket taken here has its count taken below, in this drain or an
  // earlier one (the bucket's exchange acquires what its recorder did before it). The served
  // total minus the business total can then lag the successes, never exceed them.
  const bool had = !out->histogram.empty();
  const uint64_t served = histogram_.Drain(&out->histogram);
  if (had) std::sort(out->histogram.begin(), out->histogram.end());
  out->latency_count += served;
  add(drained_served_, served);
  out->latency_sum_us += take(latency_sum_us_);
  for (int i = 0; i < kOutcomes; ++i) {
    if (i == WT_OUTCOME_SUCCESS) continue;
    const uint64_t n = take(Count(i));
    out->outcomes[i] += n;
    add(drained_[i], n);
  }
  // Successes = served - business errors, as running totals: a business error whose count was
  // taken but whose bucket was not makes the difference lag by one, and the next drain that
  // takes the bucket hands the success on. Once all is drained the total is exact.
  const uint64_t served_total = drained_served_.load(std::memory_order_relaxed);
  const uint64_t business_total = drained_[WT_OUTCOME_BUSINESS_ERROR].load(std::memory_order_relaxed);
  const uint64_t handed = drained_[WT_OUTCOME_SUCCESS].load(std::memory_order_relaxed);
  if (served_total > business_total + handed) {
    const uint64_t n = served_total - business_total - handed;
    out->outcomes[WT_OUTCOME_SUCCESS] += n;
    add(drained_[WT_OUTCOME_SUCCESS], n);
  }
  for (int i = 0; i < kResources; ++i) {
    out->resource_sum[i] += take(resource_sum_[i]) / kMicro;
    out->resource_n[i] += take(resource_n_[i]);
  }
}

uint64_t HotStats::Lifetime(int outcome) const {
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  if (outcome != WT_OUTCOME_SUCCESS) return get(drained_[outcome]) + get(Count(outcome));
  const uint64_t served = get(drained_served_) + histogram_.Pending();
  const uint64_t business = Lifetime(WT_OUTCOME_BUSINESS_ERROR);
  return served > business ? served - business : 0;
}

void Window::Resize(size_t slots) {
  // A reload changed the window's length: keep the newest samples that still fit.
  std::vector<CycleSample> next(slots);
  const size_t keep = std::min(count_, slots);
  for (size_t i = 0; i < keep; ++i) next[i] = std::move(ring_[(start_ + count_ - keep + i) % ring_.size()]);
  ring_ = std::move(next);
  start_ = 0;
  count_ = keep;
}

CycleSample& Window::Next(size_t slots) {
  slots = std::max<size_t>(slots, 1);
  if (ring_.size() != slots) Resize(slots);
  size_t i;
  if (count_ < slots) {
    i = (start_ + count_++) % slots;
  } else {
    i = start_;
    start_ = (start_ + 1) % slots;
  }
  ring_[i].Reset();
  return ring_[i];
}

WindowStats Window::Compute() const {
  WindowStats s;
  uint64_t lat_sum = 0, lat_n = 0;
  std::array<double, kResources> rsum{};
  std::array<uint64_t, kResources> rn{};
  constexpr size_t kInline = 16;
  const SparseHistogram* inline_parts[kInline];
  std::vector<const SparseHistogram*> heap_parts;
  const SparseHistogram** parts = inline_parts;
  if (count_ > kInline) {
    heap_parts.resize(count_);
    parts = heap_parts.data();
  }
  size_t nparts = 0;
  for (size_t k = 0; k < count_; ++k) {
    const CycleSample& c = At(k);
    for (int i = 0; i < kOutcomes; ++i) s.outcomes[i] += c.outcomes[i];
    lat_sum += c.latency_sum_us;
    lat_n += c.latency_count;
    for (int i = 0; i < kResources; ++i) {
      rsum[i] += c.resource_sum[i];
      rn[i] += c.resource_n[i];
    }
    if (!c.histogram.empty()) parts[nparts++] = &c.histogram;
  }
  for (uint64_t n : s.outcomes) s.requests += n;
  if (s.requests) s.error_rate = double(s.requests - s.outcomes[WT_OUTCOME_SUCCESS]) / s.requests;
  s.latency_samples = lat_n;
  if (lat_n) s.mean_ms = double(lat_sum) / lat_n / 1000.0;
  // Drain() leaves each part sorted, and the latency count is the parts' record count.
  double q[2];
  if (nparts <= 2) {
    // The default window (two slots): a two-way walk, without the k-way merge's bookkeeping.
    UpperQuantilesOfTwo(nparts > 0 ? parts[0] : nullptr, nparts > 1 ? parts[1] : nullptr, lat_n,
                        &q[0], &q[1]);
  } else {
    static constexpr double kQs[2] = {0.95, 0.99};
    QuantilesOfSorted(parts, nparts, kQs, q, 2, lat_n);
  }
  s.p95_ms = q[0] / 1000.0;
  s.p99_ms = q[1] / 1000.0;
  for (int i = 0; i < kResources; ++i) {
    s.resource_known[i] = rn[i] > 0;
    s.resources[i] = rn[i] ? rsum[i] / rn[i] : 0;
  }
  return s;
}

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
