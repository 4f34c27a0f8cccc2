#include "weighted_sim/series.h"

namespace weighted_sim {

void Series::Resize(int n, int backend_count) {
  seconds = n;
  for (auto* v : {&success, &errors, &timeouts, &sent}) v->assign(n, 0);
  mean_latency_ms.assign(n, 0.0);
  p99_latency_ms.assign(n, 0.0);
  backends.assign(backend_count, BackendSeries{});
  for (BackendSeries& b : backends) {
    for (auto* v : {&b.sent, &b.success, &b.errors, &b.queue}) v->assign(n, 0);
    for (auto* v : {&b.cpu, &b.memory, &b.weight}) v->assign(n, 0.0);
    b.sick.assign(n, 0);
    b.state.assign(n, std::string());
  }
}

}  // namespace weighted_sim
