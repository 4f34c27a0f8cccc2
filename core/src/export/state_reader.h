// A monitor: the read-only side of the state file (state_file.h), for any number of readers in
// any processes (wt_monitor_open). It reads with pread, never a mapping: a file truncated or
// rewritten under it is a short read or a failed check, an error, never a SIGBUS. Everything in
// the file is checked before it is used (magic, version, sizes against the file's own size,
// every offset, each slot's sequence lock and hash), so a truncated, corrupted or hostile file
// is refused with a message naming what is wrong; the writer is never waited for.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "export/state_format.h"
#include "util/status.h"

namespace weighted {

class Monitor {
 public:
  // WT_ERR_IO: the file cannot be opened or read; WT_ERR_FORMAT: it is not a state file this
  // library understands (the message says which check failed).
  static Status Open(const char* where, std::string path, std::unique_ptr<Monitor>* out);
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // The engine's snapshot JSON as the writer last published it.
  Status Snapshot(const char* where, std::string* out);
  // {"interval_ms", "next", "points": [...]}: the points after `since` (0: all kept), at most
  // `max` of the newest (0: no limit). Pass "next" back as `since` to read only new points.
  Status History(const char* where, uint64_t since, uint64_t max, std::string* out);
  // {"next", "lost", "reset", "events": [...]}: the events after `cursor`, at most `max` (0: no
  // limit), oldest first. "lost" counts events overwritten before they were read; "reset" says
  // the cursor came from another file (a restarted writer) and reading began again.
  Status Events(const char* where, uint64_t cursor, uint64_t max, std::string* out);
  // Who writes the file and how recently: pid, service, state, writer_alive, times, sizes.
  Status Info(const char* where, std::string* out);

 private:
  explicit Monitor(std::string path) : path_(std::move(path)) {}
  // Re-reads and checks the header; reopens the path when the writer replaced the file.
  Status Refresh(const char* where);
  Status OpenFile(const char* where);
  // Copies slot `number` at `offset` into *out. *ok false (no error) when it is being written
  // (*busy, when given, says so: worth reading again) or holds another number; an error when it
  // fails a check that no writer would. `text`: the payload must be UTF-8 without a NUL (JSON;
  // the snapshot slots hold a binary record, which its renderer checks).
  Status ReadSlot(const char* where, uint64_t offset, uint64_t slot_bytes, uint64_t number,
                  std::string* out, bool* ok, bool* busy = nullptr, bool text = true);

  std::mutex mu_;  // one call at a time per monitor: a reopen swaps the descriptor
  const std::string path_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  state_format::Header h_{};
  std::string record_;  // the last snapshot record read, its capacity kept for the next
};

}  // namespace weighted
