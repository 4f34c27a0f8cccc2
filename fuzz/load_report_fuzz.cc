// libFuzzer target: a server's load report header, as any bytes a backend (or something in
// between) could send. The parse must stay bounded and never crash; what it accepts must be what
// the rules can take (fractions in [0, 1], finite non-negative rates, a latency in ms within
// the limit); what it refuses must say so with WT_ERR_BAD_LOAD_REPORT and leave the output
// untouched. A JSON report it accepts must
// be JSON to a full parser too (nlohmann's), with the same numbers: the scanner's grammar is a
// subset of JSON's, and its fast number path must round as strtod does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "stats/load_report.h"

using namespace weighted;

namespace {

void CheckAgainstAFullParser(std::string_view header, const LoadReport& r) {
  const size_t at = header.find_first_not_of(" \t");
  if (at == std::string_view::npos || header.substr(at, 4) != "JSON") return;
  const nlohmann::json doc =
      nlohmann::json::parse(header.substr(at + 4), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) std::abort();
  // A number nlohmann reads for `name` (either spelling) is the one the report holds.
  const auto same = [&](const char* proto, const char* camel, uint32_t bit, double got, bool capped) {
    for (const char* name : {proto, camel}) {
      const auto it = doc.find(name);
      if (it == doc.end() || !it->is_number()) continue;
      double want = it->get<double>();
      if (capped) want = std::min(want, 1.0);
      if (!(r.present & bit) || got != want) std::abort();
    }
  };
  same("eps", "eps", kReportEps, r.eps, false);
  same("cpu_utilization", "cpuUtilization", WT_RES_CPU, r.resources[0], true);
  same("mem_utilization", "memUtilization", WT_RES_MEMORY, r.resources[1], false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view header(reinterpret_cast<const char*>(data), size);
  const LoadReportNames names{"thread_pool", "connection_pool", "latency_ms", 3600.0 * 1000.0};
  LoadReport r;
  r.present = 0xffffffffu;  // a refused parse must not write
  const Status s = ParseLoadReport("fuzz", header, names, &r);
  if (!s.ok()) {
    if (s.code() != WT_ERR_BAD_LOAD_REPORT || r.present != 0xffffffffu || s.message().empty()) {
      std::abort();
    }
    if (s.message().find('\n') != std::string::npos) std::abort();  // quoted, never raw
    return 0;
  }
  if (r.present & ~0x3fu) std::abort();
  for (int i = 0; i < kResources; ++i) {
    if ((r.present & (1u << i)) && !(r.resources[i] >= 0 && r.resources[i] <= 1)) std::abort();
  }
  if ((r.present & kReportRps) && !(std::isfinite(r.rps) && r.rps >= 0)) std::abort();
  if ((r.present & kReportEps) && !(std::isfinite(r.eps) && r.eps >= 0)) std::abort();
  if (r.has_latency && !(r.latency_ms >= 0 && r.latency_ms <= names.max_latency_ms)) std::abort();
  CheckAgainstAFullParser(header, r);
  return 0;
}
