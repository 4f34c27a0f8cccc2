// The hot path's C entry points. Each is a NULL check and a forward: the work and its errors
// are in Service.
#include <cstring>

#include "abi/c_api.h"

using namespace weighted;

#define WT_SERVICE_CALL(where, body)                              \
  Call(where, [&]() -> Status {                                   \
    if (!service) return NullArg(where, "service");               \
    Service* svc = AsService(service);                            \
    body                                                          \
  })

extern "C" {

WT_API wt_status wt_service_set_endpoints(wt_service* service, const wt_endpoint_spec* specs,
                                          size_t count) {
  return WT_SERVICE_CALL("wt_service_set_endpoints", {
    return svc->owner().SetEndpoints(svc, specs, count, nullptr);
  });
}

WT_API wt_status wt_service_set_endpoints_epoch(wt_service* service, const wt_endpoint_spec* specs,
                                                size_t count, uint64_t* out_epoch) {
  return WT_SERVICE_CALL("wt_service_set_endpoints_epoch", {
    if (!out_epoch) return NullArg("wt_service_set_endpoints_epoch", "out_epoch");
    return svc->owner().SetEndpoints(svc, specs, count, out_epoch);
  });
}

WT_API wt_status wt_service_pick(wt_service* service, wt_pick* out) {
  return WT_SERVICE_CALL("wt_service_pick", {
    if (!out) return NullArg("wt_service_pick", "out");
    return svc->Pick(out);
  });
}

WT_API wt_status wt_service_complete(wt_service* service, const wt_pick* pick, double latency_ms,
                                     int outcome) {
  return WT_SERVICE_CALL("wt_service_complete", {
    if (!pick) return NullArg("wt_service_complete", "pick");
    return svc->Finish(*pick, latency_ms, outcome, true);
  });
}

WT_API wt_status wt_service_cancel(wt_service* service, const wt_pick* pick) {
  return WT_SERVICE_CALL("wt_service_cancel", {
    if (!pick) return NullArg("wt_service_cancel", "pick");
    return svc->Finish(*pick, 0, WT_OUTCOME_SUCCESS, false);
  });
}

WT_API wt_status wt_service_report_key(wt_service* service, uint64_t key, double latency_ms,
                                       int outcome) {
  return WT_SERVICE_CALL("wt_service_report_key", { return svc->ReportKey(key, latency_ms, outcome); });
}

WT_API wt_status wt_service_report(wt_service* service, const char* endpoint_id,
                                   double latency_ms, int outcome) {
  return WT_SERVICE_CALL("wt_service_report", {
    if (!endpoint_id) return NullArg("wt_service_report", "endpoint_id");
    return svc->ReportId(endpoint_id, latency_ms, outcome);
  });
}

WT_API wt_status wt_service_report_batch(wt_service* service, wt_report* reports, size_t count,
                                         size_t* out_recorded) {
  return WT_SERVICE_CALL("wt_service_report_batch", {
    if (!reports && count) return NullArg("wt_service_report_batch", "reports");
    return svc->ReportBatch(reports, count, out_recorded);
  });
}

WT_API wt_status wt_service_report_resources(wt_service* service, const char* endpoint_id,
                                             const wt_resources* resources) {
  return WT_SERVICE_CALL("wt_service_report_resources", {
    if (!endpoint_id) return NullArg("wt_service_report_resources", "endpoint_id");
    if (!resources) return NullArg("wt_service_report_resources", "resources");
    return svc->ReportResources(endpoint_id, *resources);
  });
}

WT_API wt_status wt_service_endpoint_key(wt_service* service, const char* id, uint64_t* out_key) {
  return WT_SERVICE_CALL("wt_service_endpoint_key", {
    if (!id) return NullArg("wt_service_endpoint_key", "id");
    if (!out_key) return NullArg("wt_service_endpoint_key", "out_key");
    return svc->KeyOf(id, out_key);
  });
}

WT_API wt_status wt_service_endpoint_id(wt_service* service, uint64_t key, char* buf, size_t cap,
                                        size_t* out_len) {
  return WT_SERVICE_CALL("wt_service_endpoint_id", {
    if (!out_len) return NullArg("wt_service_endpoint_id", "out_len");
    std::string id;
    Status s = svc->IdOf(key, &id);
    if (!s.ok()) return s;
    *out_len = id.size();
    if (!buf || cap <= id.size()) {
      return InvalidArgument(fmt::format("wt_service_endpoint_id: buffer of {} bytes is too small "
                                         "for an id of {} bytes plus NUL", cap, id.size()));
    }
    std::memcpy(buf, id.data(), id.size() + 1);
    return Status::Ok();
  });
}

}  // extern "C"
