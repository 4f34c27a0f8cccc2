// libFuzzer target: a server's load report header, as any bytes a backend (or something in
// between) could send. The parse must stay bounded and never crash; what it accepts must be what
// the rules can take (fractions in [0, 1], finite non-negative rates); what it refuses must say
// so with WT_ERR_BAD_LOAD_REPORT and leave the output untouched.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "stats/load_report.h"

using namespace weighted;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view header(reinterpret_cast<const char*>(data), size);
  const LoadReportNames names{"thread_pool", "connection_pool"};
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
  return 0;
}
