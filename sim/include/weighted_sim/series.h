// Per-second time series of one run: what the client saw and what each backend did.
// Bin s covers [s, s + 1) seconds of simulated time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weighted_sim {

struct BackendSeries {
  std::vector<int64_t> sent;     // requests the policy sent to it (counted when sent)
  std::vector<int64_t> success;  // successful answers the client got from it
  std::vector<int64_t> errors;   // errors of every class the client got from it
  std::vector<double> cpu;       // reported CPU at the end of the second
  std::vector<double> memory;    // reported memory at the end of the second
  std::vector<int64_t> queue;    // queued requests at the end of the second
  std::vector<double> weight;    // the policy's normalised weight at the end of the second
  std::vector<uint8_t> sick;     // 1 if a fault was active on it at the end of the second
  std::vector<std::string> state;  // the policy's published state at the end of the second
                                   // (empty for policies without states)
};

struct Series {
  int seconds = 0;
  std::vector<int64_t> success;  // successful responses completed in the second
  std::vector<int64_t> errors;   // 5xx + timeouts + connection errors completed in the second
  std::vector<int64_t> timeouts; // the subset of errors that were client timeouts
  std::vector<int64_t> sent;     // requests sent in the second
  std::vector<double> mean_latency_ms;  // over every completion in the second (0 if none)
  std::vector<double> p99_latency_ms;
  std::vector<BackendSeries> backends;

  void Resize(int seconds, int backends);
};

}  // namespace weighted_sim
