#include "pick/alias_table.h"

#include <algorithm>
#include <cmath>

namespace weighted {

void AliasTable::Build(const std::vector<uint32_t>& items, const std::vector<double>& weights) {
  const size_t n = items.size();
  columns_.assign(n, Column{});
  if (n == 0) return;
  double sum = 0;
  for (double w : weights) sum += w;
  // Vose's method: scaled probabilities, split into columns below and above the mean.
  std::vector<double> p(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    p[i] = weights[i] * n / sum;
    (p[i] < 1 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  constexpr double kScale = 4294967296.0;  // 2^32
  constexpr uint32_t kFull = 0xffffffffu;   // with alias == item: always the column's own item
  while (!small.empty() && !large.empty()) {
    uint32_t s = small.back(), l = large.back();
    small.pop_back();
    large.pop_back();
    columns_[s] = {static_cast<uint32_t>(std::min<long long>(std::llround(p[s] * kScale), kFull)),
                   items[s], items[l]};
    p[l] = (p[l] + p[s]) - 1;
    (p[l] < 1 ? small : large).push_back(l);
  }
  // Whatever remains is 1 up to rounding.
  for (uint32_t i : large) columns_[i] = {kFull, items[i], items[i]};
  for (uint32_t i : small) columns_[i] = {kFull, items[i], items[i]};
}

}  // namespace weighted
