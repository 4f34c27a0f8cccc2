// The C boundary's one error model: each entry point runs its body through Call(), which clears
// or sets the thread-local message and turns every C++ exception into a status. No exception
// ever crosses into C (as XGBoost's API_BEGIN/API_END do).
#pragma once

#include <new>
#include <string>

#include <fmt/format.h>

#include "runtime/engine.h"
#include "util/status.h"

struct wt_engine {};   // never instantiated: the handles are Engine* and Service* in disguise
struct wt_service {};

namespace weighted {

void SetLastError(const Status& s);

template <typename T> constexpr const char* TypeName();
template <> constexpr const char* TypeName<wt_pick>() { return "wt_pick"; }
template <> constexpr const char* TypeName<wt_endpoint_spec>() { return "wt_endpoint_spec"; }
template <> constexpr const char* TypeName<wt_endpoints_options>() { return "wt_endpoints_options"; }
template <> constexpr const char* TypeName<wt_report>() { return "wt_report"; }
template <> constexpr const char* TypeName<wt_resources>() { return "wt_resources"; }
template <> constexpr const char* TypeName<wt_event>() { return "wt_event"; }
template <> constexpr const char* TypeName<wt_load_report>() { return "wt_load_report"; }

template <typename Fn>
wt_status Call(const char* where, Fn&& fn) noexcept {
  try {
    Status s = fn();
    SetLastError(s);
    return s.code();
  } catch (const std::bad_alloc&) {
    SetLastError({WT_ERR_NO_MEMORY, fmt::format("{}: out of memory", where)});
    return WT_ERR_NO_MEMORY;
  } catch (const std::exception& e) {
    SetLastError({WT_ERR_INTERNAL, fmt::format("{}: internal error: {}", where, e.what())});
    return WT_ERR_INTERNAL;
  } catch (...) {
    SetLastError({WT_ERR_INTERNAL, fmt::format("{}: internal error", where)});
    return WT_ERR_INTERNAL;
  }
}

inline Engine* AsEngine(wt_engine* e) { return reinterpret_cast<Engine*>(e); }
inline Service* AsService(wt_service* s) { return reinterpret_cast<Service*>(s); }

inline Status NullArg(const char* where, const char* arg) {
  return InvalidArgument(fmt::format("{}: {} is NULL", where, arg));
}

// A sized struct from the caller (weighted.h, "Compatibility"): its `size` must cover at least
// the struct as 2.0 published it. `what` names the argument ("pick", "specs[3]"). The message is
// built out of line: the check sits on every pick and finish, and a Status made and destroyed
// there cost more than the pick's alias draw.
template <typename T>
[[gnu::cold, gnu::noinline]] Status SizeTooSmall(const char* where, const char* what, const T& s) {
  return InvalidArgument(fmt::format("{}: {}.size is {}, less than sizeof({}) = {}; initialise it "
                                     "with its WT_*_INIT", where, what, s.size,
                                     TypeName<T>(), sizeof(T)));
}

template <typename T>
inline bool SizeOk(const T& s) { return s.size >= sizeof(T); }

template <typename T>
Status CheckSize(const char* where, const char* what, const T& s) {
  if (SizeOk(s)) [[likely]] return Status::Ok();
  return SizeTooSmall(where, what, s);
}

// Checks an engine handle: not NULL and (best effort) not destroyed.
inline Status CheckEngine(const char* where, wt_engine* e) {
  if (!e) return NullArg(where, "engine");
  if (!AsEngine(e)->Valid()) return InvalidArgument(fmt::format("{}: engine handle is not live", where));
  return Status::Ok();
}

// Copies a string into memory the caller frees with wt_free().
Status ReturnString(const std::string& s, char** out, size_t* out_len);
// Hands out text already in such memory (export/snapshot_json.h), without a copy.
struct MallocedText;
Status ReturnText(MallocedText&& text, char** out, size_t* out_len);

// Reads a whole file, refusing anything larger than max_bytes.
Status ReadFile(const char* where, const char* path, size_t max_bytes, std::string* out);

}  // namespace weighted
