// Walker/Vose alias table: a weighted draw in O(1) with one random number and one 12-byte
// column read, exact in expectation, with no first-pick bias and no shared write (the scheduler
// stands alone, as gRPC's StaticStrideScheduler and Envoy's EdfScheduler do: weights in, an
// index out).
#pragma once

#include <cstdint>
#include <vector>

namespace weighted {

// Walker/Vose alias table over items with positive weights.
class AliasTable {
 public:
  // `items[i]` is drawn with probability weights[i] / sum(weights); weights must be > 0.
  void Build(const std::vector<uint32_t>& items, const std::vector<double>& weights);
  bool empty() const { return columns_.empty(); }
  uint32_t Sample(uint64_t r) const {
    // High 32 bits choose the column (Lemire's multiply-shift), low 32 bits the coin. One
    // 12-byte column per draw: at 10 000 endpoints the table (120 KB) stays in L2.
    const Column& c = columns_[((r >> 32) * columns_.size()) >> 32];
    return static_cast<uint32_t>(r) < c.prob ? c.item : c.alias;
  }

 private:
  struct Column {
    uint32_t prob;   // P(own item) scaled to 2^32; a full column has 2^32 - 1 and alias == item
    uint32_t item;
    uint32_t alias;  // the item drawn when the coin is >= prob
  };
  std::vector<Column> columns_;
};

}  // namespace weighted
