#include "export/state_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "export/json_writer.h"
#include "export/snapshot_record.h"
#include "util/quoted.h"
#include "util/utf8.h"

namespace weighted {

namespace sf = state_format;

namespace {

// A slot that stays mid-write or keeps moving for this many reads is reported, not waited for:
// the writer publishes at most a few times a second, so two failed reads in a row are already
// rare, and a writer killed mid-write leaves its slot odd for good.
constexpr int kAttempts = 16;

Status FormatError(const char* where, const std::string& path, const std::string& why) {
  return {WT_ERR_FORMAT, fmt::format("{}: {} is not a state file this library reads: {}", where,
                                     Quoted(path), why)};
}

Status IoError(const char* where, const std::string& what, const std::string& path) {
  return {WT_ERR_IO, fmt::format("{}: {} {}: {}", where, what, Quoted(path), std::strerror(errno))};
}

// Reads exactly n bytes at off; false on a short read (the file shrank under the reader).
bool ReadAt(int fd, void* buf, size_t n, uint64_t off) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = pread(fd, p, n, static_cast<off_t>(off));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    off += static_cast<uint64_t>(got);
  }
  return true;
}

// a + b * c without overflow, else false.
bool End(uint64_t a, uint64_t b, uint64_t c, uint64_t* out) {
  uint64_t prod;
  return !__builtin_mul_overflow(b, c, &prod) && !__builtin_add_overflow(a, prod, out);
}

// The checks every header passes before any of its numbers is used; `size` is the file's.
std::string CheckHeader(const sf::Header& h, uint64_t size) {
  if (std::memcmp(h.magic, sf::kMagic, sizeof h.magic) != 0) return "bad magic";
  if (h.endian_tag != sf::kEndianTag) return "written on a machine of the other byte order";
  if (h.major < sf::kOldestMajor || h.major > sf::kMajor) {
    if (sf::kOldestMajor == sf::kMajor) {
      return fmt::format("format version {}.{}; this library reads {}.x", h.major, h.minor,
                         sf::kMajor);
    }
    return fmt::format("format version {}.{}; this library reads {}.x to {}.x", h.major, h.minor,
                       sf::kOldestMajor, sf::kMajor);
  }
  if (h.major == sf::kMajor && h.minor < sf::kOldestMinor) {
    return fmt::format("format version {}.{}: its endpoint records lack the expected share; "
                       "this library reads {}.{} and later (open it with the library that "
                       "wrote it)", h.major, h.minor, sf::kMajor, sf::kOldestMinor);
  }
  if (h.header_bytes < sizeof(sf::Header) || h.header_bytes > sf::kHeaderBytes) {
    return fmt::format("header size {} outside [{}, {}]", h.header_bytes, sizeof(sf::Header),
                       sf::kHeaderBytes);
  }
  if (h.file_bytes != size) {
    return fmt::format("the header gives {} bytes but the file has {} (truncated?)",
                       h.file_bytes, size);
  }
  if (h.file_bytes > sf::kMaxFileBytes) return fmt::format("{} bytes is too large", h.file_bytes);
  struct Region {
    const char* name;
    uint64_t offset, slot_bytes, slots;
  };
  const Region regions[] = {{"snapshot slot 0", h.snapshot_offset[0], h.snapshot_slot_bytes, 1},
                            {"snapshot slot 1", h.snapshot_offset[1], h.snapshot_slot_bytes, 1},
                            {"history", h.history_offset, h.history_slot_bytes, h.history_slots},
                            {"events", h.events_offset, h.event_slot_bytes, h.event_slots}};
  for (const Region& r : regions) {
    uint64_t end;
    if (r.slot_bytes < 2 * sizeof(sf::SlotHeader) || r.slot_bytes > sf::kMaxSlotBytes ||
        r.slot_bytes % 8 != 0) {
      return fmt::format("{}: slot size {} outside [{}, {}] or not a multiple of 8", r.name,
                         r.slot_bytes, 2 * sizeof(sf::SlotHeader), sf::kMaxSlotBytes);
    }
    if (r.slots < 1 || r.slots > sf::kMaxSlots) {
      return fmt::format("{}: {} slots outside [1, {}]", r.name, r.slots, sf::kMaxSlots);
    }
    if (r.offset < h.header_bytes || !End(r.offset, r.slot_bytes, r.slots, &end) ||
        end > h.file_bytes) {
      return fmt::format("{}: offset {} with {} slots of {} bytes does not fit in the file", r.name,
                         r.offset, r.slots, r.slot_bytes);
    }
  }
  const void* nul = std::memchr(h.service, '\0', sizeof h.service);
  if (nul == nullptr) return "service name unterminated";
  if (!IsUtf8(std::string_view(h.service, static_cast<const char*>(nul) - h.service))) {
    return "service name is not UTF-8";
  }
  if (h.state < sf::kRunning || h.state > sf::kReplaced) {
    return fmt::format("unknown writer state {}", h.state);
  }
  // A writer counts one by one from 0: at a million a second 2^62 takes 146 000 years. A count
  // beyond is damage, and would overflow the readers' arithmetic on slot numbers.
  for (auto [name, count] : {std::pair{"snapshots", h.snapshots},
                             std::pair{"history points", h.history_points},
                             std::pair{"events", h.events}}) {
    if (count > sf::kMaxCount) return fmt::format("{} count {} is not a count", name, count);
  }
  return "";
}

int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Status Monitor::Open(const char* where, std::string path, std::unique_ptr<Monitor>* out) {
  std::unique_ptr<Monitor> m(new Monitor(std::move(path)));
  Status s = m->OpenFile(where);
  if (!s.ok()) return s;
  *out = std::move(m);
  return Status::Ok();
}

Monitor::~Monitor() {
  if (fd_ >= 0) close(fd_);
}

Status Monitor::OpenFile(const char* where) {
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(where, "cannot open", path_);
  struct stat st;
  sf::Header h;
  std::string why;
  if (fstat(fd, &st) != 0) {
    Status s = IoError(where, "cannot stat", path_);
    close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) < sizeof h || !ReadAt(fd, &h, sizeof h, 0)) {
    why = fmt::format("{} bytes, shorter than a header", st.st_size);
  } else {
    why = CheckHeader(h, static_cast<uint64_t>(st.st_size));
  }
  if (!why.empty()) {
    close(fd);
    return FormatError(where, path_, why);
  }
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  h_ = h;
  return Status::Ok();
}

Status Monitor::Refresh(const char* where) {
  struct stat st;
  // The writer grows the file by renaming a new one over the path: follow it. A path that is
  // gone (a closed writer's file deleted) leaves the last file readable.
  const bool moved = stat(path_.c_str(), &st) == 0 && (st.st_ino != ino_ || st.st_dev != dev_);
  sf::Header h;
  struct stat own;
  if (!moved && fstat(fd_, &own) == 0 && ReadAt(fd_, &h, sizeof h, 0)) {
    const std::string why = CheckHeader(h, static_cast<uint64_t>(own.st_size));
    if (!why.empty()) return FormatError(where, path_, why);
    if (h.state != sf::kReplaced) {
      h_ = h;
      return Status::Ok();
    }
  } else if (!moved) {
    return FormatError(where, path_, "the header can no longer be read (truncated?)");
  }
  return OpenFile(where);
}

Status Monitor::ReadSlot(const char* where, uint64_t offset, uint64_t slot_bytes, uint64_t number,
                         std::string* out, bool* ok, bool* busy, bool text) {
  *ok = false;
  if (busy) *busy = false;
  sf::SlotHeader sh;
  if (!ReadAt(fd_, &sh, sizeof sh, offset)) return FormatError(where, path_, "truncated slot");
  if (sh.seq % 2 != 0) {
    if (busy) *busy = true;
    return Status::Ok();
  }
  if (sh.number != number) return Status::Ok();
  if (sh.length > slot_bytes - sizeof sh) {
    return FormatError(where, path_, fmt::format("slot at offset {} claims {} bytes, more than "
                                                 "its {}", offset, sh.length,
                                                 slot_bytes - sizeof sh));
  }
  out->resize(sh.length);
  if (!ReadAt(fd_, out->data(), sh.length, offset + sizeof sh)) {
    return FormatError(where, path_, "truncated slot");
  }
  uint64_t seq_after;
  if (!ReadAt(fd_, &seq_after, sizeof seq_after, offset)) {
    return FormatError(where, path_, "truncated slot");
  }
  if (seq_after != sh.seq) {  // rewritten while copied: try again
    if (busy) *busy = true;
    return Status::Ok();
  }
  if (sf::Hash(out->data(), out->size()) != sh.hash) {
    // Stable yet wrong: a torn copy would have moved seq, so this is damage, not a race.
    return FormatError(where, path_, fmt::format("the slot at offset {} fails its hash", offset));
  }
  if (text && (std::memchr(out->data(), '\0', out->size()) != nullptr || !IsUtf8(*out))) {
    return FormatError(where, path_, fmt::format("the slot at offset {} holds a NUL or bytes "
                                                 "that are not UTF-8", offset));
  }
  *ok = true;
  return Status::Ok();
}

Status Monitor::Snapshot(const char* where, std::string* out) {
  std::lock_guard lock(mu_);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Status s = Refresh(where);
    if (!s.ok()) return s;
    const uint64_t n = h_.snapshots;
    if (n == 0) {
      return {WT_ERR_NOT_FOUND, fmt::format("{}: {} has no snapshot yet (the writer publishes its "
                                            "first after it starts)", where, Quoted(path_))};
    }
    bool ok;
    s = ReadSlot(where, h_.snapshot_offset[(n - 1) % 2], h_.snapshot_slot_bytes, n, &record_, &ok,
                 nullptr, false);
    if (!s.ok()) return s;
    if (!ok) continue;
    // A record that passed its hash yet does not render was made so (damage would fail the
    // hash): refused, never half-rendered.
    const std::string why = RenderSnapshot(record_, out);
    if (!why.empty()) {
      out->clear();
      return FormatError(where, path_, fmt::format("snapshot {}: {}", n, why));
    }
    return Status::Ok();
  }
  return FormatError(where, path_, fmt::format("no complete snapshot in {} reads (a writer "
                                               "that died mid-write, or a damaged file)", kAttempts));
}

Status Monitor::History(const char* where, uint64_t since, uint64_t max, std::string* out) {
  std::lock_guard lock(mu_);
  Status s = Refresh(where);
  if (!s.ok()) return s;
  const uint64_t newest = h_.history_points;
  const uint64_t oldest = newest > h_.history_slots ? newest - h_.history_slots + 1 : 1;
  uint64_t from = std::max(since > newest ? 0 : since + 1, oldest);
  if (max > 0 && newest >= from && newest - from + 1 > max) from = newest - max + 1;
  std::string points, text;
  uint64_t next = std::min(since, newest);
  int retries = kAttempts;  // for the whole call (see Events)
  for (uint64_t n = from; n <= newest; ++n) {
    bool ok = false, busy = true;
    const uint64_t off = h_.history_offset + ((n - 1) % h_.history_slots) * h_.history_slot_bytes;
    for (bool first = true; !ok && busy && (first || retries-- > 0); first = false) {
      s = ReadSlot(where, off, h_.history_slot_bytes, n, &text, &ok, &busy);
      if (!s.ok()) return s;
    }
    if (!ok) continue;  // overwritten while read: the reader fell a whole ring behind
    if (!points.empty()) points += ',';
    points += text;
    next = n;
  }
  *out = fmt::format(R"({{"interval_ms":{},"next":{},"points":[{}]}})", h_.interval_ms, next, points);
  return Status::Ok();
}

Status Monitor::Events(const char* where, uint64_t cursor, uint64_t max, std::string* out) {
  std::lock_guard lock(mu_);
  Status s = Refresh(where);
  if (!s.ok()) return s;
  const uint64_t newest = h_.events;
  const uint64_t oldest = newest > h_.event_slots ? newest - h_.event_slots + 1 : 1;
  const bool reset = cursor > newest;
  if (reset) cursor = 0;
  const uint64_t from = std::max(cursor + 1, oldest);
  uint64_t lost = from - (cursor + 1);
  std::string events, text;
  uint64_t next = cursor, count = 0;
  // Only a slot caught mid-write is read again, and at most kAttempts times in the whole call: a
  // slot holding another number was overwritten (or never written) and stays so, and a file
  // whose slots all claim to be mid-write (a hostile one) must not cost slots x attempts reads.
  int retries = kAttempts;
  for (uint64_t n = from; n <= newest && (max == 0 || count < max); ++n) {
    bool ok = false, busy = true;
    const uint64_t off = h_.events_offset + ((n - 1) % h_.event_slots) * h_.event_slot_bytes;
    for (bool first = true; !ok && busy && (first || retries-- > 0); first = false) {
      s = ReadSlot(where, off, h_.event_slot_bytes, n, &text, &ok, &busy);
      if (!s.ok()) return s;
    }
    next = n;
    if (!ok) {
      ++lost;
      continue;
    }
    if (!events.empty()) events += ',';
    events += text;
    ++count;
  }
  *out = fmt::format(R"({{"next":{},"lost":{},"reset":{},"events":[{}]}})", next, lost,
                     reset ? "true" : "false", events);
  return Status::Ok();
}

Status Monitor::Info(const char* where, std::string* out) {
  std::lock_guard lock(mu_);
  Status s = Refresh(where);
  if (!s.ok()) return s;
  // EPERM: alive under another user. In another PID namespace the pid means nothing here;
  // `last_write_unix_ms` tells a reader there how fresh the file is.
  const bool alive = h_.pid > 0 && (kill(static_cast<pid_t>(h_.pid), 0) == 0 || errno == EPERM);
  const char* state = h_.state == sf::kClosed ? "closed" : alive ? "running" : "gone";
  JsonWriter w;
  w.BeginObject().Key("path").String(path_).Key("format");
  w.String(fmt::format("{}.{}", h_.major, h_.minor)).Key("service").String(h_.service);
  w.Key("pid").Int(h_.pid).Key("state").String(state).Key("writer_alive").Bool(alive);
  w.Key("library_version").Uint(h_.library_version).Key("interval_ms").Uint(h_.interval_ms);
  w.Key("created_unix_ms").Int(h_.created_unix_ns / 1000000);
  w.Key("last_write_unix_ms").Int(static_cast<int64_t>(h_.last_write_unix_ns / 1000000));
  w.Key("age_ms").Int(UnixNowMs() - static_cast<int64_t>(h_.last_write_unix_ns / 1000000));
  w.Key("snapshots").Uint(h_.snapshots).Key("history_points").Uint(h_.history_points);
  w.Key("history_slots").Uint(h_.history_slots).Key("events").Uint(h_.events);
  w.Key("event_slots").Uint(h_.event_slots).Key("file_bytes").Uint(h_.file_bytes);
  w.EndObject();
  *out = w.Take();
  return Status::Ok();
}

}  // namespace weighted
