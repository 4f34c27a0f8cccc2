// HTTP GET for the engine's metric sources, through libcurl. libcurl is loaded when the first
// source starts (dlopen of libcurl.so.4) rather than linked: libweighted.so, the JNI library and
// the Python module then run on machines without it (and the aarch64 cross build needs no arm64
// libcurl), and a source configured there says why it cannot poll instead of the whole library
// failing to load.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

namespace weighted {

class HttpGet {
 public:
  // Loads libcurl (once per process). False, with the reason in *error, if it cannot.
  static bool Available(std::string* error);
  // "libcurl/7.88.1 ..." once loaded, else "".
  static std::string Version();

  HttpGet();
  ~HttpGet();
  HttpGet(const HttpGet&) = delete;
  HttpGet& operator=(const HttpGet&) = delete;

  // GETs `url` within timeout_ms (connection included), keeping at most max_bytes of the body.
  // `cancel` set by another thread aborts the transfer within a few milliseconds. On success
  // (any HTTP status) writes the status and body and returns ""; else returns the error.
  std::string Get(const std::string& url, long timeout_ms, size_t max_bytes,
                  const std::atomic<bool>& cancel, long* status, std::string* body);
  // `s` percent-encoded for a query string.
  std::string Escape(std::string_view s);

 private:
  void* handle_ = nullptr;  // CURL*, reused so the connection to the server is kept
};

}  // namespace weighted
