// What every hot-path call reads: one immutable picture of a service, swapped with one atomic
// pointer store and freed through the reclaimer once no reader holds it.
#pragma once

#include <memory>

#include "pick/schedule.h"
#include "runtime/membership.h"

namespace weighted {

struct Snapshot {
  std::shared_ptr<const Membership> members;
  Schedule schedule;
  double max_latency_ms = 0;  // reports above are rejected as absurd
};

}  // namespace weighted
