// What endpoints' servers say of themselves: resource samples (wt_service_report_resources),
// load report headers (on a response, or on their own) and the figures a metrics source polls.
#include <fmt/format.h>

#include "runtime/service.h"
#include "runtime/service_guard.h"
#include "stats/load_report.h"
#include "util/quoted.h"

namespace weighted {

Status Service::ReportResources(const char* where, std::string_view id, uint32_t present,
                                const double (&values)[kResources]) {
  if (present & ~0xFu) {
    return InvalidArgument(fmt::format("{}: unknown bits {:#x} in present", where, present & ~0xFu));
  }
  for (int i = 0; i < kResources; ++i) {
    if ((present & (1u << i)) && !(values[i] >= 0 && values[i] <= 1)) {
      return InvalidArgument(fmt::format("{}: {} must be a fraction in [0, 1], got {}", where,
                                         ResourceName(i), values[i]));
    }
  }
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) {
    return NotFound(fmt::format("{}: no endpoint {} in service {}", where, Quoted(id), Quoted(name_)));
  }
  ep->stats.RecordResources(present, values);
  return Status::Ok();
}

Status Service::RecordLoad(const char* where, Endpoint* ep, std::string_view header,
                          const Snapshot& snap) {
  LoadReport r;
  Status s = ParseLoadReport(where, header, snap.report_names(), &r);
  if (!s.ok()) [[unlikely]] {
    bad_load_reports_.fetch_add(1, std::memory_order_relaxed);
    if (ep) ep->stats.CountBadReport();
    return s;
  }
  if (ep) {
    const int64_t now = clock_.NowNs();
    ep->stats.RecordServerResources(r.present & 0xFu, r.resources, now);
    ep->stats.RecordServerRates(r.present, r.rps, r.eps, now);
    if (r.has_latency) ep->stats.RecordServerLatency(r.latency_ms, now);
  }
  return Status::Ok();
}

Status Service::ReportLoadKey(const char* where, uint64_t key, std::string_view header) {
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(key);
  if (!ep) {
    stale_reports_.fetch_add(1, std::memory_order_relaxed);
    return {WT_ERR_STALE, fmt::format("{}: endpoint key {:#x} is not in service {}", where,
                                      key, Quoted(name_))};
  }
  return RecordLoad(where, ep, header, *g.snap);
}

template <typename F>
bool Service::WithEndpoint(std::string_view id, F&& record) {
  Guarded g(*this);
  Endpoint* ep = g.snap->members->Find(id);
  if (!ep) return false;
  record(ep->stats, clock_.NowNs());
  return true;
}

bool Service::RecordServerById(std::string_view id, uint32_t present,
                               const std::array<double, kResources>& values) {
  return WithEndpoint(id, [&](HotStats& s, int64_t now) { s.RecordServerResources(present, values, now); });
}

bool Service::RecordServerErrorRateById(std::string_view id, double rate) {
  return WithEndpoint(id, [&](HotStats& s, int64_t now) { s.RecordServerErrorRate(rate, now); });
}

bool Service::RecordServerLatencyById(std::string_view id, double ms) {
  return WithEndpoint(id, [&](HotStats& s, int64_t now) { s.RecordServerLatency(ms, now); });
}

}  // namespace weighted
