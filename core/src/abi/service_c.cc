// The service's C entry points. Each is a check of the arguments the C types cannot express
// (NULLs, struct sizes) and a forward: the work and its errors are in runtime/service.cc.
#include <cstring>
#include <type_traits>
#include <vector>

#include "abi/c_api.h"
#include "export/snapshot_json.h"
#include "util/quoted.h"

using namespace weighted;

namespace {

// The body of every entry point here: the service handle checked, then `fn(svc)` under Call().
template <typename Fn>
wt_status ServiceCall(const char* where, wt_service* service, Fn&& fn) noexcept {
  return Call(where, [&]() -> Status {
    if (!service) return NullArg(where, "service");
    return fn(AsService(service));
  });
}

// Element i of an array of sized structs, whose stride is its elements' size.
template <typename T>
T& At(T* base, size_t stride, size_t i) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return *reinterpret_cast<T*>(reinterpret_cast<Byte*>(base) + i * stride);
}

// An array of `count` sized structs (weighted.h, "Compatibility"): the first element's size is
// at least the 2.0 struct's, and every element repeats it.
// The stride of an array of T: a C compiler makes a struct's size a multiple of its alignment,
// so any other size is not a struct's, and stepping by it would read misaligned elements.
template <typename T>
Status CheckAligned(const char* where, const char* what, const T& first) {
  if (first.size % alignof(T) == 0) return Status::Ok();
  return InvalidArgument(fmt::format("{}: {}[0].size is {}, not a multiple of the struct's "
                                     "alignment ({}): set it with the struct's _INIT macro",
                                     where, what, first.size, alignof(T)));
}

template <typename T>
Status CheckStride(const char* where, const char* what, const T* array, size_t count) {
  Status s = CheckSize(where, fmt::format("{}[0]", what).c_str(), array[0]);
  if (!s.ok()) return s;
  if (s = CheckAligned(where, what, array[0]); !s.ok()) return s;
  const size_t stride = array[0].size;
  for (size_t i = 1; i < count; ++i) {
    const uint32_t size = At(array, stride, i).size;
    if (size != stride) {
      return InvalidArgument(fmt::format("{}: {}[{}].size is {}, but {}[0].size is {}: every "
                                         "element of the array has the same size",
                                         where, what, i, size, what, stride));
    }
  }
  return Status::Ok();
}

}  // namespace

extern "C" {

WT_API wt_status wt_service_set_endpoints(wt_service* service, const wt_endpoint_spec* specs,
                                          size_t count, const wt_endpoints_options* options,
                                          uint64_t* out_keys, uint64_t* out_epoch) {
  constexpr const char* where = "wt_service_set_endpoints";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    wt_release_fn release = nullptr;
    if (options) {
      Status s = CheckSize(where, "options", *options);
      if (!s.ok()) return s;
      release = options->release_user;
    }
    SpecArray list{specs, sizeof(wt_endpoint_spec), count};
    if (count > 0) {
      if (!specs) return NullArg(where, "specs");
      Status s = CheckSize(where, "specs[0]", specs[0]);
      if (!s.ok()) return s;
      if (s = CheckAligned(where, "specs", specs[0]); !s.ok()) return s;
      list.stride = specs[0].size;
    }
    return svc->owner().SetEndpoints(where, svc, list, release, out_keys, out_epoch);
  });
}

WT_API wt_status wt_service_remove(wt_service* service) {
  constexpr const char* where = "wt_service_remove";
  return ServiceCall(where, service,
                     [&](Service* svc) -> Status { return svc->owner().RemoveService(where, svc); });
}

WT_API wt_status wt_service_pick(wt_service* service, wt_pick* out) {
  constexpr const char* where = "wt_service_pick";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!out) return NullArg(where, "out");
    if (!SizeOk(*out)) [[unlikely]] return SizeTooSmall(where, "out", *out);
    return svc->Pick(where, out, nullptr, nullptr);
  });
}

WT_API wt_status wt_service_pick_pinned(wt_service* service, wt_pick* out, wt_pin_fn pin,
                                        void* ctx) {
  constexpr const char* where = "wt_service_pick_pinned";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!out) return NullArg(where, "out");
    if (!pin) return NullArg(where, "pin");
    if (!SizeOk(*out)) [[unlikely]] return SizeTooSmall(where, "out", *out);
    return svc->Pick(where, out, pin, ctx);
  });
}

WT_API wt_status wt_service_complete(wt_service* service, const wt_pick* pick, double latency_ms,
                                     int outcome) {
  constexpr const char* where = "wt_service_complete";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!pick) return NullArg(where, "pick");
    if (!SizeOk(*pick)) [[unlikely]] return SizeTooSmall(where, "pick", *pick);
    return svc->Finish(where, *pick, latency_ms, outcome, true);
  });
}

WT_API wt_status wt_service_cancel(wt_service* service, const wt_pick* pick) {
  constexpr const char* where = "wt_service_cancel";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!pick) return NullArg(where, "pick");
    if (!SizeOk(*pick)) [[unlikely]] return SizeTooSmall(where, "pick", *pick);
    return svc->Finish(where, *pick, 0, WT_OUTCOME_SUCCESS, false);
  });
}

WT_API wt_status wt_service_report_key(wt_service* service, uint64_t key, double latency_ms,
                                       int outcome) {
  constexpr const char* where = "wt_service_report_key";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    return svc->ReportKey(where, key, latency_ms, outcome);
  });
}

WT_API wt_status wt_service_report(wt_service* service, const char* endpoint_id,
                                   double latency_ms, int outcome) {
  constexpr const char* where = "wt_service_report";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!endpoint_id) return NullArg(where, "endpoint_id");
    return svc->ReportId(where, endpoint_id, latency_ms, outcome);
  });
}

WT_API wt_status wt_service_report_batch(wt_service* service, wt_report* reports, size_t count,
                                         size_t* out_recorded) {
  constexpr const char* where = "wt_service_report_batch";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (count == 0) {
      if (out_recorded) *out_recorded = 0;
      return Status::Ok();
    }
    if (!reports) return NullArg(where, "reports");
    Status s = CheckStride(where, "reports", reports, count);
    if (!s.ok()) return s;
    return svc->ReportBatch(where, reports, count, reports[0].size, out_recorded);
  });
}

WT_API wt_status wt_service_report_resources(wt_service* service, const char* endpoint_id,
                                             const wt_resources* resources) {
  constexpr const char* where = "wt_service_report_resources";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!endpoint_id) return NullArg(where, "endpoint_id");
    if (!resources) return NullArg(where, "resources");
    Status s = CheckSize(where, "resources", *resources);
    if (!s.ok()) return s;
    const wt_resources& r = *resources;
    const double values[kResources] = {r.cpu, r.memory, r.thread_pool, r.connection_pool};
    return svc->ReportResources(where, endpoint_id, r.present, values);
  });
}

WT_API wt_status wt_service_complete_with_load(wt_service* service, const wt_pick* pick,
                                               double latency_ms, int outcome,
                                               const char* header, size_t len) {
  constexpr const char* where = "wt_service_complete_with_load";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!pick) return NullArg(where, "pick");
    if (!SizeOk(*pick)) [[unlikely]] return SizeTooSmall(where, "pick", *pick);
    if (!header && len > 0) return NullArg(where, "header");
    return svc->FinishWithLoad(where, *pick, latency_ms, outcome,
                               header ? std::string_view(header, len) : std::string_view());
  });
}

WT_API wt_status wt_service_report_load_key(wt_service* service, uint64_t key,
                                            const char* header, size_t len) {
  constexpr const char* where = "wt_service_report_load_key";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!header) return NullArg(where, "header");
    return svc->ReportLoadKey(where, key, std::string_view(header, len));
  });
}

WT_API wt_status wt_service_endpoint_key(wt_service* service, const char* id, uint64_t* out_key) {
  constexpr const char* where = "wt_service_endpoint_key";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!id) return NullArg(where, "id");
    if (!out_key) return NullArg(where, "out_key");
    return svc->KeyOf(where, id, out_key);
  });
}

WT_API wt_status wt_service_endpoint_id(wt_service* service, uint64_t key, char* buf, size_t cap,
                                        size_t* out_len) {
  constexpr const char* where = "wt_service_endpoint_id";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!out_len) return NullArg(where, "out_len");
    std::string id;
    Status s = svc->IdOf(where, key, &id);
    if (!s.ok()) return s;
    *out_len = id.size();
    if (!buf || cap <= id.size()) {
      return InvalidArgument(fmt::format("{}: buffer of {} bytes is too small for an id of {} "
                                         "bytes plus NUL", where, cap, id.size()));
    }
    std::memcpy(buf, id.data(), id.size() + 1);
    return Status::Ok();
  });
}

WT_API wt_status wt_service_snapshot_json(wt_service* service, const char* endpoint_id,
                                          char** out_json, size_t* out_len) {
  constexpr const char* where = "wt_service_snapshot_json";
  return ServiceCall(where, service, [&](Service* svc) -> Status {
    if (!out_json) return NullArg(where, "out_json");
    // An empty id is no endpoint's (ids are 1..256 bytes), not "every endpoint".
    const bool one = endpoint_id != nullptr;
    const SnapshotScope scope{svc, one ? std::string_view(endpoint_id) : std::string_view()};
    size_t recorded = 0;
    MallocedText json;
    if (!one || !scope.endpoint_id.empty()) json = SnapshotText(svc->owner(), scope, &recorded);
    if (one && recorded == 0) {
      return NotFound(fmt::format("{}: no endpoint {} in service {}", where,
                                  Quoted(scope.endpoint_id), Quoted(svc->name())));
    }
    return ReturnText(std::move(json), out_json, out_len);
  });
}

}  // extern "C"
