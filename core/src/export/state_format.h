// The state file's layout, shared by its writer (state_file.h) and its reader (state_reader.h).
// docs/state-file.md describes it for other implementations; this is the one definition.
//
// A header page, then two snapshot slots (each a snapshot record, snapshot_record.h), the history
// ring and the event ring (JSON texts). Every slot starts with a SlotHeader whose `seq` is a
// sequence lock: odd while the writer fills the slot, even once it is complete. The writer alternates snapshot slots and bumps `snapshots` in the header
// only after a slot is complete, so the slot a reader is sent to is never the one being written
// (unless the reader falls two whole publications behind, which its seq check catches). A reader
// copies a slot, checks that seq was even and unchanged and that the payload's hash matches, and
// retries otherwise: it never blocks the writer and never returns a torn state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace weighted::state_format {

inline constexpr char kMagic[8] = {'W', 'T', 'S', 'T', 'A', 'T', 'E', '\0'};
// 2: the snapshot slots hold a binary record (snapshot_record.h) that the reader renders as the
// snapshot JSON; in 1 they held the JSON itself.
// 3: each service's record carries its error budget, the capacity guard's verdict and the
// client's subset, each endpoint's its server-reported error rate and subset membership
// (snapshot_record.h); the header is 2's.
// 3.1: each endpoint's record carries its expected share, and in its last pad byte what it was
// judged on (evidence; 3.0 wrote 0 there); its state may be 4 (failing), which a 3.0 reader
// refuses as "not a state". A 3.0 record is 8 bytes shorter per endpoint, so a 3.1 reader
// refuses 3.0 files (kOldestMinor) rather than misread them.
inline constexpr uint32_t kMajor = 3;        // a reader refuses a major outside [kOldestMajor, kMajor]
inline constexpr uint32_t kOldestMajor = 3;
inline constexpr uint32_t kMinor = 1;  // additions: fields at the end of the header or a record
inline constexpr uint32_t kOldestMinor = 1;  // of kMajor: the oldest minor whose records this reads
inline constexpr uint32_t kEndianTag = 0x01020304;
inline constexpr uint64_t kHeaderBytes = 4096;
inline constexpr size_t kMaxServiceName = 256;

// A reader's sanity limits: a file claiming more is refused, not allocated.
inline constexpr uint64_t kMaxSlotBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxSlots = 1'000'000;
inline constexpr uint64_t kMaxFileBytes = uint64_t{64} << 30;
inline constexpr uint64_t kMaxCount = uint64_t{1} << 62;  // snapshots, history points, events

// kReplaced: the writer grew the file into a new one renamed over the path; reopen the path.
enum WriterState : uint64_t { kRunning = 1, kClosed = 2, kReplaced = 3 };

struct SlotHeader {
  uint64_t seq;     // odd while being written
  uint64_t number;  // which publication, point or event this slot holds (1, 2, ...)
  uint64_t length;  // payload bytes after this header
  uint64_t hash;    // Hash() of the payload
};
static_assert(sizeof(SlotHeader) == 32);

// Every field sits at a fixed offset (static_asserts below); the "live" ones change while the
// writer runs and are written with single aligned 8-byte atomic stores.
struct Header {
  char magic[8];
  uint32_t major;
  uint32_t minor;
  uint32_t header_bytes;
  uint32_t endian_tag;
  uint64_t file_bytes;
  uint64_t snapshot_offset[2];
  uint64_t snapshot_slot_bytes;  // each snapshot slot, its SlotHeader included
  uint64_t history_offset;
  uint64_t history_slot_bytes;
  uint64_t history_slots;
  uint64_t events_offset;
  uint64_t event_slot_bytes;
  uint64_t event_slots;
  int64_t pid;
  int64_t created_unix_ns;
  uint64_t library_version;  // WT_VERSION_NUMBER of the writer
  uint64_t interval_ms;      // controller.interval_ms when the file was made
  char service[kMaxServiceName + 8];  // NUL-terminated
  // ---- live ----
  uint64_t state;               // WriterState
  uint64_t snapshots;           // publications; the newest n is in slot (n - 1) % 2
  uint64_t history_points;      // the newest point n is in history slot (n - 1) % history_slots
  uint64_t events;              // the newest event n is in event slot (n - 1) % event_slots
  uint64_t last_write_unix_ns;  // wall clock of the last write of any kind
};
static_assert(offsetof(Header, file_bytes) == 24);
static_assert(offsetof(Header, service) == 136);
static_assert(offsetof(Header, state) == 400);
static_assert(sizeof(Header) == 440 && sizeof(Header) <= kHeaderBytes);

// Detects a torn or corrupted payload (not an adversary: a hostile writer can forge it). Eight
// bytes a step so a megabyte costs a fraction of a millisecond.
inline uint64_t Hash(const char* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

// The header's live fields and the slots' seq are shared with other processes through the
// mapping: accessed only through these.
inline uint64_t Load(const uint64_t* field) { return __atomic_load_n(field, __ATOMIC_ACQUIRE); }
inline void Store(uint64_t* field, uint64_t v) { __atomic_store_n(field, v, __ATOMIC_RELEASE); }

}  // namespace weighted::state_format
