// What the faults on one backend do at an instant: the ground truth that the backend model
// applies and that only the oracle may read.
#pragma once

#include <cstdint>
#include <vector>

#include "weighted_sim/scenario.h"

namespace weighted_sim {

struct Effects {
  double service_multiplier = 1;  // product over active faults
  double error_rate = 0;          // 1 - prod(1 - e_i), background error included by the caller
  double cpu_extra = 0;           // sum, the reported CPU is clamped to 1
  double memory = 0;              // reported memory: base, climbing toward a leak's level
  bool down = false;              // hard down / flap down phase: connection errors
  double fast_fail_rate = 0;      // share answered 5xx after fast_fail_ms without queueing
  double fast_fail_ms = 1;
  // stall: the process is paused (a stop-the-world GC) until this time; work started in the
  // pause finishes its service time after it. 0: not stalled.
  double stall_until_s = 0;
  bool sick = false;              // any fault has intensity > 0 (or is in a down phase)
};

// The intensity f(t) in [0, 1] of one fault (see FaultSpec).
double FaultIntensity(const FaultSpec& f, double t_s);

// Combined effects of every fault on `backend` at time t.
Effects EffectsAt(const std::vector<FaultSpec>& faults, int backend, double base_memory,
                  double t_s);

}  // namespace weighted_sim
