// One history point of the state file: per service its name and panic flag, per endpoint
// [id, state, weight, share, measured, penalty]: "share" is the share of picks the model expects
// over the next cycle (the snapshot's share.expected), "measured" the share the last cycle had
// (share.last_cycle). It is written from the engine's own state in the same inspection that
// writes the snapshot record (EncodeSnapshot), so a point and the snapshot published with it
// always agree; a column the engine has no value for is null, and readers derive what they can.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "export/json_writer.h"

namespace weighted {

// The columns of each endpoint row, in order.
inline constexpr const char* kHistoryColumns[] = {"id", "state", "weight", "share", "measured",
                                                  "penalty"};

struct HistoryPointHeader {
  uint64_t n = 0;        // the point's number in the file
  int64_t cycle_ns = 0;  // the engine's time of the cycle
  int64_t unix_ns = 0;   // the wall time it was written
};

// {"n", "time_ns", "unix_ms", "columns", "services": [{"name", "panic", "endpoints": [...]}]},
// written piece by piece: Begin, then per service BeginService, Endpoint..., EndService, then End.
class HistoryPointWriter {
 public:
  explicit HistoryPointWriter(JsonWriter& w) : w_(w) {}
  void Begin(const HistoryPointHeader& h);
  void BeginService(std::string_view name, bool panic);
  void Endpoint(std::string_view id, std::string_view state, double weight,
                std::optional<double> share, std::optional<double> measured, double penalty);
  void EndService();
  void End();

 private:
  JsonWriter& w_;
};

}  // namespace weighted
