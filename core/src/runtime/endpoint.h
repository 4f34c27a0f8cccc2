// One backend endpoint as the runtime holds it: the parts pick and report touch with atomics
// (the load estimate, the hot recorder) and the part only the controller touches, under its
// service's mutex (ctl).
#pragma once

#include <cstdint>
#include <string>

#include "model/endpoint_state.h"
#include "pick/load_estimate.h"
#include "stats/hot_stats.h"

namespace weighted {

// Field order is for the hot paths: the key and what a load-aware pick reads of a candidate fill
// the first cache line (aligned, so that it is one line), the report's time stamps and the hot
// recorder's first fields the next (a report at 10 000 endpoints misses on each line it
// touches); the id and the controller's state come after.
struct alignas(64) Endpoint {
  Endpoint(std::string id_, uint64_t key_) : key(key_), id(std::move(id_)) {}

  const uint64_t key;  // (incarnation << 32) | slot; never reused within a service
  LoadEstimate load;
  HotStats stats;

  const std::string id;
  ControlState ctl;
  // In this client's subset of the service (config "subset"); always true without one. Only
  // the controller reads and writes it, under the service's mutex.
  bool in_subset = true;
  // The server's latency the last cycle wrote into load.ewma_ms as its floor (0: none), so
  // that the next can tell its own figure, which follows the server, from the client's (the
  // controller's, under the service's mutex).
  double server_latency_floor = 0;
};

}  // namespace weighted
