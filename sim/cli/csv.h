// CSV time series and summary for spreadsheets and quick plots.
#pragma once

#include <filesystem>

#include "weighted_sim/sim.h"

namespace weighted_sim {

// Writes DIR/summary.csv and DIR/series_<policy>.csv (one row per second).
void WriteCsv(const Results& results, const std::filesystem::path& dir);

}  // namespace weighted_sim
