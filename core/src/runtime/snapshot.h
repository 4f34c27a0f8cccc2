// What every hot-path call reads: one immutable picture of a service, swapped with one atomic
// pointer store and freed through the reclaimer once no reader holds it.
#pragma once

#include <memory>
#include <string>

#include "pick/schedule.h"
#include "stats/load_report.h"
#include "runtime/membership.h"

namespace weighted {

struct Snapshot {
  std::shared_ptr<const Membership> members;
  Schedule schedule;
  double max_latency_ms = 0;  // reports above are rejected as absurd
  // Which named metrics of a server's load report are the pools and the server's latency
  // (config's load_report).
  std::string thread_pool_metric, connection_pool_metric, latency_metric;
  LoadReportNames report_names() const {
    return {thread_pool_metric, connection_pool_metric, latency_metric, max_latency_ms};
  }
};

}  // namespace weighted
