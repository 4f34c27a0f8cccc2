// An event the model or the runtime decided on, before it is queued and handed to callers
// (runtime/event_queue.h). The type names are the one spelling of wt_event_type.
#pragma once

#include <cstdint>
#include <string>

#include "weighted/weighted.h"

namespace weighted {

struct PendingEvent {
  wt_event_type type;
  int64_t time_ns;
  std::string endpoint;
  double old_weight, new_weight;
  std::string reason;  // JSON object
};

// "weight_changed", "isolated", ...; nullptr for a value that is not a wt_event_type.
const char* EventTypeName(int type);

}  // namespace weighted
