// The snapshot as a compact binary record, and its rendering as the snapshot JSON.
//
// wt_engine_snapshot_json and the state file's reader both render the JSON from this record
// with the same code (RenderSnapshot), so a monitor in another process gets exactly the text the
// writer's own process would. The record exists for the state file's writer: it publishes after
// every controller cycle, and a record holds each number as its 8 bytes (no formatting, no
// keys), about half the bytes of the JSON, written at memory speed straight into the file's
// slot. The formatting moves to the reader, which renders only when someone reads.
//
// Layout (little-endian, every item a multiple of 8 bytes; `str` is a u64 length, the bytes,
// zeros to the next multiple of 8):
//   SnapshotHead, str profile,
//   per source (head.sources): SourceRecord, str name, url, state, last_error, library,
//   per service: u64 1, ServiceRecord, str name, BudgetRecord, GuardRecord,
//     per endpoint (service.endpoints): EndpointRecord, str id, HitRecord x endpoint.hits,
//   u64 0 (no more services).
// A reader treats a record as hostile input: every count is checked against the bytes left,
// every enum against its range, every string for UTF-8; trailing bytes are refused.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "export/history_point.h"
#include "export/json_writer.h"
#include "stats/signals.h"

namespace weighted {

class Engine;
class Service;

struct SnapshotHead {
  uint64_t version;  // WT_VERSION_NUMBER of the writer
  int64_t now_ns;
  uint64_t events_total, events_dropped;
  uint64_t sources;
  uint64_t manual;      // 1: the manual clock
  uint64_t load_aware;  // 1: picker.mode load_aware (endpoints carry picker evidence)
};

struct SourceRecord {
  uint64_t polls, failed, series, matched;
  uint64_t has_age;
  int64_t age_ms;
};

struct ServiceRecord {
  uint64_t epoch, panic, stale_reports, bad_load_reports;
  uint64_t removed_totals[kOutcomes];
  uint64_t endpoints;
  uint64_t subset_size;  // endpoints in this client's subset; 0: no subset
  uint64_t subset_of;    // the service's endpoints, of which the subset is chosen
};

// The capacity guard's last cycle (model/guard.h); flags: 1 enabled, 2 headroom known.
struct GuardRecord {
  double headroom_rps, moved_rps;
  uint64_t held, flags;
};
static_assert(sizeof(GuardRecord) == 8 * 4);

// The service's error budget (model/budget.h) as its last cycle left it.
struct BudgetRecord {
  uint64_t on;  // budget.max_error_rate > 0; the rest is zero when it is off
  double max_error_rate, target_fraction;
  int64_t window_ms;
  double observed_error_rate;
  uint64_t window_results, window_failures;
  double error_cost;
  uint64_t met, limited;
};
static_assert(sizeof(BudgetRecord) == 8 * 10);

// One endpoint: the controller's view as of its last cycle and the live counters. Times are the
// engine's nanoseconds; the renderer turns them into ages against SnapshotHead::now_ns.
struct EndpointRecord {
  uint64_t key, index;
  double base, weight, target, effective, penalty;
  uint64_t requests;
  uint64_t outcomes[kOutcomes];
  double error_rate, mean_ms, p95_ms, p99_ms;
  double resources[kResources];
  double server_resources[kResources];
  uint64_t server_reports, bad_reports;
  double rps, eps;
  double server_error_rate;  // valid when server_error_known
  int64_t rates_at_ns;  // INT64_MIN: never
  int64_t server_at_ns[kResources];
  int64_t inflight;
  double share;
  uint64_t cycle_results;
  double expected_share;  // format 3.1
  int64_t picker_inflight;
  double picker_latency_ms, picker_failure_share;
  int64_t isolated_since_ns;
  uint64_t forced_restores;
  uint64_t totals[kOutcomes];
  uint64_t hits;  // HitRecords after the id
  // evidence: Evidence (model/endpoint_state.h); format 3.0 wrote 0 there whatever the window.
  uint8_t state, known, slow_start, has_rps, has_eps, in_subset, server_error_known, evidence;
  uint8_t resource_known[kResources], server_known[kResources];
  uint8_t resource_origin[kResources], pad1[4];
};
// No padding anywhere: the bytes written are exactly the fields (and the hash covers them all).
static_assert(sizeof(EndpointRecord) == 8 * (2 + 5 + 1 + kOutcomes + 4 + 2 * kResources + 2 + 3 +
                                             1 + kResources + 1 + 1 + 1 + 1 + 1 + 2 + 1 + 1 +
                                             kOutcomes + 1) + 24);

struct HitRecord {
  double value, threshold, penalty;
  uint8_t metric, fired, evaluated, pad[5];
};
static_assert(sizeof(HitRecord) == 32);

// The marker before each service and after the last one, and an item's size padded to the
// record's 8-byte grain (the writer and the reader share both).
inline constexpr uint64_t kMoreServices = 1, kNoMoreServices = 0;
inline size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

// Where a record goes: a fixed span (the state file's slot), or a string that grows. A span too
// small keeps counting, so the caller learns the size it needs (overflow(), size()).
class ByteSink {
 public:
  ByteSink(char* data, size_t capacity) : p_(data), cap_(capacity) {}
  explicit ByteSink(std::string* grow) : grow_(grow) {
    grow_->resize(grow_->capacity());
    p_ = grow_->data();
    cap_ = grow_->size();
  }

  void Put(const void* data, size_t n) {
    if (n_ + n > cap_ && grow_) Grow(n_ + n);
    if (n_ + n <= cap_) std::memcpy(p_ + n_, data, n);
    n_ += n;
  }
  template <typename T>
  void Pod(const T& v) { Put(&v, sizeof v); }
  void String(std::string_view s);
  // A string sink ends at the record's size.
  void Finish() {
    if (grow_) grow_->resize(n_);
  }

  size_t size() const { return n_; }
  bool overflow() const { return n_ > cap_; }

  // A string sink with a hook hands its bytes to `fn` at each Boundary() (called by the encoder
  // between items) once they reach `threshold`, and starts again at its beginning: the record
  // goes through a buffer of that size, whose pages stay warm. size() counts since the last.
  using Piece = void (*)(void* ctx, std::string_view bytes);
  void OnBoundary(size_t threshold, Piece fn, void* ctx) {
    threshold_ = threshold;
    piece_ = fn;
    piece_ctx_ = ctx;
  }
  void Boundary() {
    if (piece_ && n_ >= threshold_ && !overflow()) {
      piece_(piece_ctx_, std::string_view(p_, n_));
      n_ = 0;
    }
  }

 private:
  void Grow(size_t need);

  std::string* grow_ = nullptr;
  Piece piece_ = nullptr;
  void* piece_ctx_ = nullptr;
  size_t threshold_ = 0;
  char* p_ = nullptr;
  size_t cap_ = 0;
  size_t n_ = 0;
};

// Which part of the engine a record holds: every service, or one, and of it every endpoint or
// the one with this id. A part has the whole snapshot's shape (head, sources, the services
// array), and each service and endpoint in it is rendered as in the whole snapshot.
struct SnapshotScope {
  const Service* service = nullptr;  // null: every service
  std::string_view endpoint_id;      // empty: every endpoint of the service(s)
};

// The engine's state (the part `scope` names) as a record into `sink` and, when `point` is given
// with `header`, the history point `header` describes into *point (its capacity reused), in one
// inspection of each service, so the two agree. Returns the number of endpoints recorded.
size_t EncodeSnapshot(Engine& engine, ByteSink& sink, const HistoryPointHeader* header,
                      std::string* point, const SnapshotScope& scope = {});

// About the bytes EncodeSnapshot writes for `scope` (ids up to 40 bytes), to size a buffer once.
size_t RecordSizeEstimate(Engine& engine, const SnapshotScope& scope);

class ByteSource;

// Renders the snapshot JSON of a record handed over whole, or in pieces as EncodeSnapshot writes
// it (ByteSink::OnBoundary): each piece but the last ends between two items (endpoints, services),
// so the record never needs to be held whole (at 100 000 endpoints ~65 MB of fresh pages, faulted
// in and zeroed, for a record read once).
class RecordRenderer {
 public:
  // The text goes into `buffer` (emptied; its capacity reused), `reserve` bytes made room for.
  RecordRenderer(std::string buffer, size_t reserve);
  // The text goes into memory from malloc (JsonWriter::Malloced), handed out by TakeMalloced().
  explicit RecordRenderer(JsonWriter::Malloced buffer);
  ~RecordRenderer();
  RecordRenderer(const RecordRenderer&) = delete;
  RecordRenderer& operator=(const RecordRenderer&) = delete;
  // The next piece; `last` says the record ends with it. False once the record is found damaged
  // (error() says where); later pieces are ignored.
  bool Feed(std::string_view bytes, bool last);
  const std::string& error() const { return error_; }
  std::string Take();
  char* TakeMalloced(size_t* len) { return w_.TakeMalloced(len); }

 private:
  enum class Stage { kHead, kMarker, kEndpoints, kDone, kFailed };
  bool Render(ByteSource& in, bool last);

  JsonWriter w_;
  Stage stage_ = Stage::kHead;
  int64_t now_ = 0;
  bool load_aware_ = false;
  std::string service_;  // the service being rendered, for errors
  uint64_t endpoints_ = 0, next_ = 0;
  size_t trailing_ = 0;
  std::string error_;
};

// The snapshot JSON of a record into *json (its capacity reused). On a damaged record returns
// what is wrong and where (e.g. "endpoint 3 of service \"orders\": state 9 is not a state"),
// and *json is unspecified.
std::string RenderSnapshot(std::string_view record, std::string* json);

}  // namespace weighted
