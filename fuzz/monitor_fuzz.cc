// Fuzzes the state file's reader (wt_monitor_*) with files a damaged disk, another version or a
// hostile writer could leave: every check the reader makes on the header, the offsets, the
// slots' sequence locks, lengths, hashes and contents, and the snapshot record's renderer.
//
// The input is the file. When it starts with a header whose file size is at least the input's
// (and at most 4 MiB), the file is padded with zeros to that size, so that mutations reach the
// slots instead of stopping at the size check. Seeds: fuzz/monitor_seeds.py (small valid files).
//
// Properties checked on every input (a violation aborts, which libFuzzer reports as a crash):
//   - every call returns WT_OK, WT_ERR_FORMAT, WT_ERR_IO or WT_ERR_NOT_FOUND, and a failure
//     has a message;
//   - a returned text has the length reported and no NUL; the info text and the snapshot (which
//     the reader renders from the file's binary record) are valid JSON.
// ASan and UBSan watch everything underneath.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "export/state_format.h"
#include "weighted/weighted.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_monitor: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void CheckStatus(wt_status s, const char* call) {
  if (s == WT_OK) return;
  if (s != WT_ERR_FORMAT && s != WT_ERR_IO && s != WT_ERR_NOT_FOUND) {
    Fail("unexpected status", std::string(call) + ": " + wt_status_name(s) + ": " + wt_last_error());
  }
  if (wt_last_error()[0] == '\0') Fail("a failure without a message", call);
}

void CheckText(wt_status s, char* text, size_t len, const char* call, bool json) {
  CheckStatus(s, call);
  if (s != WT_OK) return;
  if (text == nullptr || std::strlen(text) != len) Fail("text and length disagree", call);
  if (json && !nlohmann::json::accept(std::string(text, len))) Fail("not JSON", text);
  wt_free(text);
}

int File() {
  static const int fd = memfd_create("fuzz_monitor", 0);
  if (fd < 0) Fail("memfd_create failed", std::strerror(errno));
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sf = weighted::state_format;
  const int fd = File();
  uint64_t file_bytes = size;
  if (size >= offsetof(sf::Header, snapshot_offset)) {
    uint64_t claimed;
    std::memcpy(&claimed, data + offsetof(sf::Header, file_bytes), sizeof claimed);
    if (claimed >= size && claimed <= (4u << 20)) file_bytes = claimed;
  }
  if (ftruncate(fd, 0) != 0 || ftruncate(fd, static_cast<off_t>(file_bytes)) != 0 ||
      pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    Fail("cannot write the file", std::strerror(errno));
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  wt_monitor* m = nullptr;
  const wt_status opened = wt_monitor_open(path.c_str(), &m);
  CheckStatus(opened, "open");
  if (opened != WT_OK) return 0;
  char* text = nullptr;
  size_t len = 0;
  wt_status s = wt_monitor_snapshot_json(m, &text, &len);
  CheckText(s, text, len, "snapshot", true);
  s = wt_monitor_history_json(m, 0, 0, &text, &len);
  CheckText(s, text, len, "history", false);
  s = wt_monitor_history_json(m, 1, 2, &text, &len);
  CheckText(s, text, len, "history since 1", false);
  s = wt_monitor_events_json(m, 0, 0, &text, &len);
  CheckText(s, text, len, "events", false);
  s = wt_monitor_events_json(m, ~uint64_t{0}, 3, &text, &len);
  CheckText(s, text, len, "events after the last", false);
  s = wt_monitor_info_json(m, &text, &len);
  CheckText(s, text, len, "info", true);
  wt_monitor_close(m);
  return 0;
}
