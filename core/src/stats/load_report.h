// A server's load report on one response: the `endpoint-load-metrics` header that gRPC, Envoy
// and vLLM use over HTTP (ORCA, fields of xds.data.orca.v3.OrcaLoadReport), parsed into the
// resources the rules read (S-O3) and the server's own rates.
//
//   TEXT cpu_utilization=0.3, mem_utilization=0.5, rps_fractional=120, eps=2,
//        named_metrics.thread_pool=0.9
//   JSON {"cpu_utilization": 0.3, "named_metrics": {"thread_pool": 0.9}}
//
// The parse is bounded (kMaxLoadReportBytes, kMaxLoadReportEntries), one pass over the bytes for
// either form, and allocates nothing unless it refuses the header: JSON is scanned for the one
// shape a report has (an object of numbers and three maps of numbers), not parsed into a
// document. A malformed header is an error naming the entry or byte and why.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "stats/signals.h"
#include "util/status.h"

namespace weighted {

inline constexpr size_t kMaxLoadReportBytes = 4096;
inline constexpr int kMaxLoadReportEntries = 64;

// Bits of LoadReport::present beyond the WT_RES_* ones (wt_load_report's present).
inline constexpr uint32_t kReportRps = 1u << 4;
inline constexpr uint32_t kReportEps = 1u << 5;

struct LoadReport {
  uint32_t present = 0;  // WT_RES_* bits, kReportRps, kReportEps
  std::array<double, kResources> resources{};  // fractions in [0, 1]
  double rps = 0, eps = 0;  // the server's own requests and errors per second
  // The server's own recent service time (named_metrics.<load_report.latency_metric>), ms. Not
  // a bit of `present`: that one is wt_load_report's, and the C ABI has no field for it.
  bool has_latency = false;
  double latency_ms = 0;
};

// Which named_metrics (or utilization) entries are the two pools, and which named_metrics entry
// is the server's latency (config's load_report; empty: none is).
struct LoadReportNames {
  std::string_view thread_pool;
  std::string_view connection_pool;
  std::string_view latency = {};
  double max_latency_ms = 3600.0 * 1000.0;  // limits.max_latency_ms: above it, refused
};

// Parses a header value (without the header's name). `where` names the caller for messages.
// On error *out is untouched and the status is WT_ERR_BAD_LOAD_REPORT.
Status ParseLoadReport(const char* where, std::string_view header, const LoadReportNames& names,
                       LoadReport* out);

}  // namespace weighted
