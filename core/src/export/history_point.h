// One history point of the state file, made from the snapshot JSON text: per service its name and
// panic flag, per endpoint [id, state, weight, share, measured, penalty]. Fields are read by name,
// so those a newer snapshot gains (share, new states) arrive without a change here and absent ones
// are null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace weighted {

// The columns of each endpoint row, in order.
inline constexpr const char* kHistoryColumns[] = {"id", "state", "weight", "share", "measured",
                                                  "penalty"};

// {"n", "time_ns", "unix_ms", "columns", "services": [{"name", "panic", "endpoints": [...]}]};
// nullopt when `snapshot` is not JSON.
std::optional<std::string> HistoryPoint(const std::string& snapshot, uint64_t n, int64_t cycle_ns,
                                        int64_t unix_ns);

}  // namespace weighted
