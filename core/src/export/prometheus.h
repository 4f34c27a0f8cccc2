// The engine's state in the Prometheus text exposition format 0.0.4 (wt_engine_prometheus): the
// same view as the JSON snapshot, one metric family per quantity.
#pragma once

#include <string>

#include "runtime/engine.h"

namespace weighted {

std::string PrometheusText(Engine& engine);

}  // namespace weighted
