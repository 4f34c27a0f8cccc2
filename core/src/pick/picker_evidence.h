// What a cycle's judgement hands back to the load-aware picker's estimates (pick/
// load_estimate.h): the evidence the controller has and the picker, which sees one request at a
// time, cannot. Called by the service's cycle, under its mutex, after the sample is drained.
#pragma once

#include "config/config.h"
#include "model/rules.h"
#include "pick/load_estimate.h"
#include "stats/cycle_sample.h"

namespace weighted {

// After a cycle of answers without a failure and near the fleet's typical latency, the picker's
// peak-EWMA latency estimate drops to that cycle's mean (see the definition for why).
void ForgetPeak(const Config& cfg, const CycleSample& sample, const ServiceReference& ref,
                LoadEstimate& load);

}  // namespace weighted
