#include "runtime/http_get.h"

#include <dlfcn.h>

#include <mutex>

#include <curl/curl.h>
#include <fmt/format.h>

namespace weighted {

namespace {

// The libcurl calls used, resolved from the loaded library. curl_easy_setopt and getinfo are
// variadic in C; calling them through a pointer of the same type is what the macro in curl.h
// would do.
struct Curl {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  char* (*easy_escape)(CURL*, const char*, int);
  void (*free)(void*);
  const char* (*easy_strerror)(CURLcode);
  char* (*version)();
  bool loaded = false;
  std::string error;
};

const Curl& Lib() {
  static Curl c;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      c.error = fmt::format("libcurl.so.4 could not be loaded ({}): install libcurl4", e ? e : "?");
      return;
    }
    bool ok = true;
    auto sym = [&](auto*& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn) {
        ok = false;
        c.error = fmt::format("libcurl.so.4 lacks {}", name);
      }
    };
    sym(c.global_init, "curl_global_init");
    sym(c.easy_init, "curl_easy_init");
    sym(c.easy_setopt, "curl_easy_setopt");
    sym(c.easy_perform, "curl_easy_perform");
    sym(c.easy_getinfo, "curl_easy_getinfo");
    sym(c.easy_cleanup, "curl_easy_cleanup");
    sym(c.easy_escape, "curl_easy_escape");
    sym(c.free, "curl_free");
    sym(c.easy_strerror, "curl_easy_strerror");
    sym(c.version, "curl_version");
    // curl_global_init is not thread-safe: here, once, before any handle exists.
    if (ok && c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      ok = false;
      c.error = "curl_global_init failed";
    }
    c.loaded = ok;  // the library stays loaded for the process: handles may outlive engines
  });
  return c;
}

struct Transfer {
  std::string* body;
  size_t max_bytes;
  bool truncated = false;
  const std::atomic<bool>* cancel;
};

size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->body->size() + bytes > t->max_bytes) {
    t->truncated = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->body->append(data, bytes);
  return bytes;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

}  // namespace

bool HttpGet::Available(std::string* error) {
  const Curl& c = Lib();
  if (!c.loaded && error) *error = c.error;
  return c.loaded;
}

std::string HttpGet::Version() {
  const Curl& c = Lib();
  return c.loaded ? c.version() : "";
}

HttpGet::HttpGet() {
  if (Lib().loaded) handle_ = Lib().easy_init();
}

HttpGet::~HttpGet() {
  if (handle_) Lib().easy_cleanup(static_cast<CURL*>(handle_));
}

std::string HttpGet::Escape(std::string_view s) {
  if (!handle_) return std::string(s);
  char* e = Lib().easy_escape(static_cast<CURL*>(handle_), s.data(), static_cast<int>(s.size()));
  if (!e) return std::string(s);
  std::string out(e);
  Lib().free(e);
  return out;
}

std::string HttpGet::Get(const std::string& url, long timeout_ms, size_t max_bytes,
                         const std::atomic<bool>& cancel, long* status, std::string* body) {
  std::string error;
  if (!Available(&error)) return error;
  if (!handle_) return "curl_easy_init failed";
  const Curl& c = Lib();
  CURL* h = static_cast<CURL*>(handle_);
  body->clear();
  Transfer t{body, max_bytes, false, &cancel};
  c.easy_setopt(h, CURLOPT_URL, url.c_str());
  c.easy_setopt(h, CURLOPT_HTTPGET, 1L);
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM from a thread that is not ours
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnData);
  c.easy_setopt(h, CURLOPT_WRITEDATA, &t);
  c.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  c.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  c.easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  c.easy_setopt(h, CURLOPT_USERAGENT, "weighted-engine");
  const CURLcode rc = c.easy_perform(h);
  if (rc != CURLE_OK) {
    if (t.truncated) return fmt::format("the answer exceeds {} bytes", max_bytes);
    if (cancel.load()) return "cancelled: the engine is stopping";
    return c.easy_strerror(rc);
  }
  long code = 0;
  c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  *status = code;
  return "";
}

}  // namespace weighted
