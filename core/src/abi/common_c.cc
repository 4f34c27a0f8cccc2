#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "abi/c_api.h"
#include "export/snapshot_json.h"
#include "export/text_block.h"
#include "model/pending_event.h"
#include "stats/signals.h"
#include "util/quoted.h"
#include "util/tls.h"

namespace weighted {

namespace {
// The message lives in a std::string, whose thread_local needs a constructor and a destructor:
// in a shared library every access to it goes through __tls_get_addr and an init guard. A
// successful call (the hot path) only reads the one-byte flag, which has the initial-exec model
// (a %fs-relative load), and touches the string only when there is a message to clear.
thread_local std::string t_last_error;
WT_TLS_INITIAL_EXEC bool t_has_error = false;
}  // namespace

void SetLastError(const Status& s) {
  if (s.ok()) {
    if (t_has_error) [[unlikely]] {
      t_last_error.clear();
      t_has_error = false;
    }
    return;
  }
  t_last_error = s.message();
  t_has_error = true;
}

Status ReturnString(const std::string& s, char** out, size_t* out_len) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return {WT_ERR_NO_MEMORY, "out of memory copying the result"};
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  *out = p;
  if (out_len) *out_len = s.size();
  return Status::Ok();
}

Status ReturnText(MallocedText&& text, char** out, size_t* out_len) {
  *out = text.data.release();
  if (out_len) *out_len = text.size;
  return Status::Ok();
}

Status ReadFile(const char* where, const char* path, size_t max_bytes, std::string* out) {
  if (!path) return NullArg(where, "path");
  // An ifstream opens a directory and then reads nothing, which would surface as a parse error
  // of an empty document.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return {WT_ERR_IO, fmt::format("{}: cannot read {}: it is a directory", where, Quoted(path))};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {WT_ERR_IO, fmt::format("{}: cannot open {}: {}", where, Quoted(path), std::strerror(errno))};
  }
  // Reads at most one byte past the limit: a huge file (or /dev/zero) is refused without
  // being loaded into memory first.
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return {WT_ERR_IO, fmt::format("{}: cannot read {}", where, Quoted(path))};
  text.resize(static_cast<size_t>(in.gcount()));
  *out = std::move(text);
  if (out->size() > max_bytes) {
    return {WT_ERR_LIMIT, fmt::format("{}: {} is more than limits.max_config_bytes = {} "
                                      "bytes", where, Quoted(path), max_bytes)};
  }
  return Status::Ok();
}

}  // namespace weighted

using namespace weighted;

extern "C" {

WT_API uint32_t wt_version_number(void) { return WT_VERSION_NUMBER; }

WT_API const char* wt_version_string(void) {
  static const std::string v =
      fmt::format("{}.{}.{}", WT_VERSION_MAJOR, WT_VERSION_MINOR, WT_VERSION_PATCH);
  return v.c_str();
}

WT_API const char* wt_last_error(void) { return t_last_error.c_str(); }

WT_API const char* wt_status_name(int status) {
  switch (status) {
    case WT_OK: return "WT_OK";
    case WT_ERR_INVALID_ARGUMENT: return "WT_ERR_INVALID_ARGUMENT";
    case WT_ERR_CONFIG_PARSE: return "WT_ERR_CONFIG_PARSE";
    case WT_ERR_CONFIG_INVALID: return "WT_ERR_CONFIG_INVALID";
    case WT_ERR_NOT_FOUND: return "WT_ERR_NOT_FOUND";
    case WT_ERR_IO: return "WT_ERR_IO";
    case WT_ERR_NO_ENDPOINT: return "WT_ERR_NO_ENDPOINT";
    case WT_ERR_LIMIT: return "WT_ERR_LIMIT";
    case WT_ERR_WRONG_CLOCK: return "WT_ERR_WRONG_CLOCK";
    case WT_ERR_STALE: return "WT_ERR_STALE";
    case WT_ERR_NO_MEMORY: return "WT_ERR_NO_MEMORY";
    case WT_ERR_DUPLICATE: return "WT_ERR_DUPLICATE";
    case WT_ERR_FORMAT: return "WT_ERR_FORMAT";
    case WT_ERR_BAD_LOAD_REPORT: return "WT_ERR_BAD_LOAD_REPORT";
    case WT_ERR_INTERNAL: return "WT_ERR_INTERNAL";
  }
  return "WT_UNKNOWN_STATUS";
}

WT_API const char* wt_outcome_name(int outcome) { return OutcomeName(outcome); }

WT_API const char* wt_event_type_name(int type) { return EventTypeName(type); }

// A large text's block is kept for the next one (export/text_block.h); anything else is freed.
WT_API void wt_free(void* p) { FreeText(p); }

WT_API int wt_outcome_from_http_status(int http_status) {
  return http_status >= 500 && http_status <= 599 ? WT_OUTCOME_HTTP_5XX : WT_OUTCOME_SUCCESS;
}

WT_API wt_status wt_config_validate(const char* json, size_t len) {
  return Call("wt_config_validate", [&]() -> Status {
    if (!json) return NullArg("wt_config_validate", "json");
    Config cfg;
    return ParseConfig(std::string_view(json, len), &cfg);
  });
}

WT_API wt_status wt_config_resolve(const char* json, size_t len, char** out_json) {
  return Call("wt_config_resolve", [&]() -> Status {
    if (!json) return NullArg("wt_config_resolve", "json");
    if (!out_json) return NullArg("wt_config_resolve", "out_json");
    Config cfg;
    Status s = ParseConfig(std::string_view(json, len), &cfg);
    if (!s.ok()) return s;
    return ReturnString(ConfigToJson(cfg), out_json, nullptr);
  });
}

}  // extern "C"
