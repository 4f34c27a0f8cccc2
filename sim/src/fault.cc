#include "weighted_sim/fault.h"

#include <algorithm>
#include <cmath>

namespace weighted_sim {
namespace {

double Ramp(double since_s, double ramp_s) {
  if (ramp_s <= 0) return 1.0;
  return std::clamp(since_s / ramp_s, 0.0, 1.0);
}

bool FlapDown(const FaultSpec& f, double t_s) {
  const double phase = std::fmod(t_s - f.start_s, f.period_s);
  return phase < f.down_s;
}

}  // namespace

double FaultIntensity(const FaultSpec& f, double t_s) {
  if (t_s < f.start_s) return 0.0;
  const double up = Ramp(t_s - f.start_s, f.ramp_s);
  if (!f.end_s || t_s < *f.end_s) return up;
  const double since_end = t_s - *f.end_s;
  if (f.recovery_s <= 0 || since_end >= f.recovery_s) return 0.0;
  // Fall from the level reached at end_s to 0 over recovery_s.
  return Ramp(*f.end_s - f.start_s, f.ramp_s) * (1.0 - since_end / f.recovery_s);
}

Effects EffectsAt(const std::vector<FaultSpec>& faults, int backend, double base_memory,
                  double t_s) {
  Effects e;
  e.memory = base_memory;
  double ok = 1.0;
  double fast_ok = 1.0;
  for (const FaultSpec& f : faults) {
    if (f.backend != backend) continue;
    const double k = FaultIntensity(f, t_s);
    if (k <= 0) continue;
    switch (f.type) {
      case FaultType::kDown:
        e.down = true;
        e.sick = true;
        continue;
      case FaultType::kFlap:
        if (FlapDown(f, t_s)) e.down = true;
        e.sick = true;  // a flapping backend is sick for the whole fault, up phases included
        continue;
      case FaultType::kStall:
        e.stall_until_s = std::max(e.stall_until_s, *f.end_s);
        e.sick = true;
        continue;
      case FaultType::kFastFail:
        fast_ok *= 1.0 - f.error_rate * k;
        e.fast_fail_ms = f.error_latency_ms >= 0 ? f.error_latency_ms : 1.0;
        break;
      default:
        break;
    }
    e.sick = true;
    e.service_multiplier *= 1.0 + (f.service_multiplier - 1.0) * k;
    e.cpu_extra += f.cpu_extra * k;
    if (f.type != FaultType::kFastFail) ok *= 1.0 - f.error_rate * k;
    if (f.memory >= 0) {
      const double mem_ramp = f.memory_ramp_s >= 0 ? f.memory_ramp_s : f.ramp_s;
      const double mk = std::min(k, Ramp(t_s - f.start_s, mem_ramp));
      e.memory = std::max(e.memory, base_memory + (f.memory - base_memory) * mk);
    }
  }
  e.error_rate = 1.0 - ok;
  e.fast_fail_rate = 1.0 - fast_ok;
  return e;
}

}  // namespace weighted_sim
