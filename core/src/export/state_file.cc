#include "export/state_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "export/history_point.h"
#include "export/json_writer.h"
#include "export/snapshot_record.h"
#include "util/quoted.h"

namespace weighted {

namespace sf = state_format;

namespace {

constexpr uint64_t kInitialSnapshotSlot = 64 * 1024;
constexpr uint64_t kInitialHistorySlot = 8 * 1024;
constexpr uint64_t kEventSlot = 2048;

int64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

std::string Replace(std::string s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// The sizes of one file; offsets follow the header in a fixed order.
struct Layout {
  uint64_t snapshot_slot, history_slot, history_slots, event_slots;
  uint64_t snapshot_offset(int i) const { return sf::kHeaderBytes + uint64_t(i) * snapshot_slot; }
  uint64_t history_offset() const { return snapshot_offset(2); }
  uint64_t events_offset() const { return history_offset() + history_slot * history_slots; }
  uint64_t file_bytes() const { return events_offset() + kEventSlot * event_slots; }
};

// A slot's seq is odd while it is written; the fence keeps the payload's stores after the odd
// seq, the release store of the even seq keeps them before it (state_format.h). BeginSlot
// returns the odd seq; a slot left odd (a record that outgrew its slot, copied into the grown
// file as it was) stays odd until EndSlot.
uint64_t BeginSlot(char* slot) {
  auto* h = reinterpret_cast<sf::SlotHeader*>(slot);
  const uint64_t seq = sf::Load(&h->seq) | 1;
  sf::Store(&h->seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  return seq;
}

// The payload is in place: its number, length and hash, then the even seq.
void EndSlot(char* slot, uint64_t odd_seq, uint64_t number, uint64_t length) {
  auto* h = reinterpret_cast<sf::SlotHeader*>(slot);
  const char* payload = slot + sizeof(sf::SlotHeader);
  __atomic_store_n(&h->number, number, __ATOMIC_RELAXED);
  __atomic_store_n(&h->length, length, __ATOMIC_RELAXED);
  __atomic_store_n(&h->hash, sf::Hash(payload, length), __ATOMIC_RELAXED);
  sf::Store(&h->seq, odd_seq + 1);
}

void WriteSlot(char* slot, uint64_t number, std::string_view payload) {
  const uint64_t seq = BeginSlot(slot);
  std::memcpy(slot + sizeof(sf::SlotHeader), payload.data(), payload.size());
  EndSlot(slot, seq, number, payload.size());
}

std::string EventJson(uint64_t n, const std::string& service, const PendingEvent& e,
                      bool with_reason) {
  JsonWriter w;
  w.BeginObject().Key("n").Uint(n).Key("time_ns").Int(e.time_ns);
  const char* type = EventTypeName(e.type);
  w.Key("type").String(type ? type : "unknown").Key("service").String(service);
  w.Key("endpoint").String(e.endpoint).Key("old_weight").Double(e.old_weight);
  w.Key("new_weight").Double(e.new_weight).Key("reason");
  if (with_reason && !e.reason.empty()) w.Json(e.reason);
  else w.BeginObject().Key("truncated").Bool(true).Key("bytes").Uint(e.reason.size()).EndObject();
  w.EndObject();
  return w.Take();
}

std::string SystemError(const char* what, const std::string& path) {
  return fmt::format("{} {}: {}", what, Quoted(path), std::strerror(errno));
}

}  // namespace

struct StateFileWriter::Mapping {
  int fd = -1;
  char* base = nullptr;
  Layout layout{};
  std::string temp_path;  // until renamed over the path

  ~Mapping() {
    if (base) munmap(base, layout.file_bytes());
    if (fd >= 0) close(fd);
  }
  sf::Header* header() { return reinterpret_cast<sf::Header*>(base); }
  char* snapshot_slot(int i) { return base + layout.snapshot_offset(i); }
  char* history_slot(uint64_t i) { return base + layout.history_offset() + i * layout.history_slot; }
  char* event_slot(uint64_t i) { return base + layout.events_offset() + i * kEventSlot; }

  // A new file of `layout` at a fresh temporary name beside `path`, mapped, its header written.
  static Status Make(const char* where, const StateFileSettings& st, const Layout& layout,
                     std::unique_ptr<Mapping>* out) {
    static std::atomic<uint64_t> counter{0};
    auto m = std::make_unique<Mapping>();
    m->layout = layout;
    m->temp_path = fmt::format("{}.tmp-{}-{}", st.path, getpid(), counter.fetch_add(1));
    m->fd = open(m->temp_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                 st.mode);
    if (m->fd < 0) {
      return {WT_ERR_IO, fmt::format("{}: export.state_file: {}", where,
                                     SystemError("cannot create", m->temp_path))};
    }
    // The umask may have taken bits the config asked for; the mode is the config's exactly.
    if (fchmod(m->fd, st.mode) != 0 ||
        ftruncate(m->fd, static_cast<off_t>(layout.file_bytes())) != 0) {
      Status s{WT_ERR_IO, fmt::format("{}: export.state_file: {}", where,
                                      SystemError("cannot size", m->temp_path))};
      unlink(m->temp_path.c_str());
      return s;
    }
    void* p = mmap(nullptr, layout.file_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
    if (p == MAP_FAILED) {
      Status s{WT_ERR_IO, fmt::format("{}: export.state_file: {}", where,
                                      SystemError("cannot map", m->temp_path))};
      unlink(m->temp_path.c_str());
      return s;
    }
    m->base = static_cast<char*>(p);
    sf::Header* h = m->header();
    std::memcpy(h->magic, sf::kMagic, sizeof h->magic);
    h->major = sf::kMajor;
    h->minor = sf::kMinor;
    h->header_bytes = sf::kHeaderBytes;
    h->endian_tag = sf::kEndianTag;
    h->file_bytes = layout.file_bytes();
    h->snapshot_offset[0] = layout.snapshot_offset(0);
    h->snapshot_offset[1] = layout.snapshot_offset(1);
    h->snapshot_slot_bytes = layout.snapshot_slot;
    h->history_offset = layout.history_offset();
    h->history_slot_bytes = layout.history_slot;
    h->history_slots = layout.history_slots;
    h->events_offset = layout.events_offset();
    h->event_slot_bytes = kEventSlot;
    h->event_slots = layout.event_slots;
    h->pid = getpid();
    h->created_unix_ns = UnixNowNs();
    h->library_version = WT_VERSION_NUMBER;
    h->interval_ms = static_cast<uint64_t>(st.interval_ms);
    std::memcpy(h->service, st.service.data(), std::min(st.service.size(), sf::kMaxServiceName));
    sf::Store(&h->state, sf::kRunning);
    *out = std::move(m);
    return Status::Ok();
  }
};

StateFileSettings StateFileSettingsOf(const Config& cfg) {
  StateFileSettings st;
  st.service = cfg.exports.service_name.empty() ? std::string(program_invocation_short_name)
                                                : cfg.exports.service_name;
  if (!cfg.exports.state_file.empty()) {
    // A service name with a slash would put the file in another directory.
    std::string safe = Replace(st.service, "/", "_");
    st.path = Replace(Replace(cfg.exports.state_file, "{service}", safe), "{pid}",
                      std::to_string(getpid()));
  }
  st.mode = static_cast<unsigned>(std::stoul(cfg.exports.state_file_mode, nullptr, 8));
  st.history_slots = cfg.exports.state_history;
  st.event_slots = cfg.exports.state_events;
  st.interval_ms = cfg.controller.interval_ms;
  return st;
}

StateFileWriter::StateFileWriter(Engine& engine, StateFileSettings settings)
    : engine_(engine), settings_(std::move(settings)), async_(!engine.manual()) {}

Status StateFileWriter::Create(const char* where, Engine& engine,
                               const StateFileSettings& settings,
                               std::shared_ptr<StateFileWriter>* out) {
  std::shared_ptr<StateFileWriter> w(new StateFileWriter(engine, settings));
  const Layout layout{kInitialSnapshotSlot, kInitialHistorySlot, settings.history_slots,
                      settings.event_slots};
  Status s = Mapping::Make(where, settings, layout, &w->map_);
  if (!s.ok()) return s;
  if (w->async_) w->worker_ = std::thread([p = w.get()] { p->Worker(); });
  *out = std::move(w);
  return Status::Ok();
}

Status StateFileWriter::Commit(const char* where) {
  std::lock_guard lock(mu_);
  if (rename(map_->temp_path.c_str(), settings_.path.c_str()) != 0) {
    return {WT_ERR_IO, fmt::format("{}: export.state_file: {}", where,
                                   SystemError("cannot rename the new file over", settings_.path))};
  }
  map_->temp_path.clear();
  committed_ = true;
  return Status::Ok();
}

StateFileWriter::~StateFileWriter() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(work_mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    worker_.join();
  }
  if (!map_) return;  // the file was never made
  if (committed_) Publish({true, false, 0});  // the state as the engine leaves it
  std::lock_guard lock(mu_);
  Touch();
  sf::Store(&map_->header()->state, final_state_);
  if (!committed_) unlink(map_->temp_path.c_str());
}

void StateFileWriter::OnCycle(int64_t now) { Request({true, true, now, sched_getcpu()}); }

void StateFileWriter::OnChange() { Request({true, false, 0}); }

void StateFileWriter::Request(Work w) {
  if (!async_) {
    Publish(w);
    return;
  }
  {
    std::lock_guard lock(work_mu_);
    // Falling a whole cycle behind merges the two into one history point: the latest.
    pending_.snapshot |= w.snapshot;
    if (w.cycle) {
      pending_.cycle = true;
      pending_.cycle_ns = w.cycle_ns;
      pending_.cpu = w.cpu;
    }
    has_work_ = true;
  }
  work_cv_.notify_one();
}

// The writer's thread yields to the controller and to request threads: SCHED_BATCH is never
// woken ahead of the thread that woke it (on a busy core the controller, which just notified
// it, would otherwise wait a time slice for the write to finish) and nice 10 gives it a small
// share when the machine is saturated. Both are allowed without privileges; if refused, the
// file is written all the same.
void LowerPriorityOfThisThread() {
  sched_param param{};
  param.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
}

// The writer reads the state the cycle has just written. Read from another core, each of those
// lines (~1.6 KB per endpoint) is then shared there, and the next cycle's first write to it must
// take it back: +13-16% on the cycle at 1 000 endpoints, against +1-6% when both run on one CPU
// (docs/state-file.md). So the writer moves to the CPU the cycle ran on for the publication and
// is free again after it. A hint only: refused (a cpuset without that CPU) or overtaken by the
// scheduler, the file is written all the same.
class Placement {
 public:
  Placement() { saved_ = pthread_getaffinity_np(pthread_self(), sizeof all_, &all_) == 0; }
  void MoveTo(int cpu) {
    if (!saved_ || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &all_)) return;
    if (sched_getcpu() == cpu) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    moved_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
  }
  void Release() {
    if (moved_) (void)pthread_setaffinity_np(pthread_self(), sizeof all_, &all_);
    moved_ = false;
  }

 private:
  cpu_set_t all_{};
  bool saved_ = false, moved_ = false;
};

void StateFileWriter::Worker() {
  LowerPriorityOfThisThread();
  Placement placement;
  std::unique_lock lock(work_mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return has_work_ || stop_; });
    if (!has_work_) return;
    const Work w = pending_;
    pending_ = {};
    has_work_ = false;
    busy_ = true;
    lock.unlock();
    placement.MoveTo(w.cpu);
    Publish(w);
    placement.Release();
    lock.lock();
    busy_ = false;
    idle_cv_.notify_all();
  }
}

void StateFileWriter::Flush() {
  if (!async_) return;
  std::unique_lock lock(work_mu_);
  idle_cv_.wait(lock, [&] { return (!has_work_ && !busy_) || stop_; });
}

void StateFileWriter::Publish(const Work& w) {
  if (!w.snapshot) return;
  // One publication at a time, so an older snapshot never overwrites a newer one. It also keeps
  // map_ in place: only Grow replaces it, and only here.
  std::lock_guard publishing(publish_mu_);
  // This runs on the controller's thread or the writer's own: nothing may escape into the cycle.
  // A publication that fails (out of memory) is skipped; the file keeps the previous one.
  try {
    HistoryPointHeader header;
    {
      std::lock_guard lock(mu_);
      if (broken_) return;
      if (w.cycle) header = {history_points_ + 1, w.cycle_ns, UnixNowNs()};
    }
    // The record goes straight into the slot the header does not point at (no buffer, no
    // copy), and the history point is written in the same inspection of each service. A record
    // that outgrows its slot grows the file, and is written again into the new one.
    for (int attempt = 0; attempt < 2; ++attempt) {
      Mapping& m = *map_;
      sf::Header* h = m.header();
      const uint64_t n = sf::Load(&h->snapshots) + 1;
      char* slot = m.snapshot_slot(int((n - 1) % 2));
      const uint64_t seq = BeginSlot(slot);
      ByteSink sink(slot + sizeof(sf::SlotHeader), m.layout.snapshot_slot - sizeof(sf::SlotHeader));
      EncodeSnapshot(engine_, sink, w.cycle ? &header : nullptr, &point_buf_);
      std::lock_guard lock(mu_);
      if (sink.overflow()) {
        if (!Grow(sizeof(sf::SlotHeader) + sink.size(), 0)) return;
        continue;
      }
      EndSlot(slot, seq, n, sink.size());
      sf::Store(&h->snapshots, n);
      if (w.cycle && !broken_ && !point_buf_.empty()) WriteHistory(point_buf_);
      Touch();
      return;
    }
  } catch (const std::exception&) {
  }
}

void StateFileWriter::WriteHistory(const std::string& point) {
  const uint64_t need = sizeof(sf::SlotHeader) + point.size();
  if (need > map_->layout.history_slot && !Grow(0, need)) return;
  const uint64_t n = ++history_points_;
  WriteSlot(map_->history_slot((n - 1) % map_->layout.history_slots), n, point);
  sf::Store(&map_->header()->history_points, n);
}

void StateFileWriter::OnEvents(const std::string& service, const std::vector<PendingEvent>& evs) {
  std::lock_guard lock(mu_);
  if (broken_) return;
  try {
    AppendEvents(service, evs);
  } catch (const std::exception&) {  // out of memory: these events are not in the file
  }
  Touch();
}

void StateFileWriter::AppendEvents(const std::string& service,
                                   const std::vector<PendingEvent>& evs) {
  for (const PendingEvent& e : evs) {
    std::string text = EventJson(events_ + 1, service, e, true);
    if (text.size() + sizeof(sf::SlotHeader) > kEventSlot) {
      text = EventJson(events_ + 1, service, e, false);  // reasons of many rules: kept short
    }
    if (text.size() + sizeof(sf::SlotHeader) > kEventSlot) {
      // Only ids escaped to six times their size get here.
      text = fmt::format(R"({{"n":{},"time_ns":{},"type":"{}","truncated":true}})", events_ + 1,
                         e.time_ns, EventTypeName(e.type) ? EventTypeName(e.type) : "unknown");
    }
    WriteEvent(std::move(text));
  }
}

void StateFileWriter::WriteEvent(std::string json) {
  const uint64_t n = ++events_;
  WriteSlot(map_->event_slot((n - 1) % map_->layout.event_slots), n, json);
  sf::Store(&map_->header()->events, n);
}

void StateFileWriter::Touch() {
  sf::Store(&map_->header()->last_write_unix_ns, static_cast<uint64_t>(UnixNowNs()));
}

bool StateFileWriter::Grow(uint64_t snapshot_need, uint64_t history_need) {
  Layout next = map_->layout;
  // Half again what is needed now, so a fleet that grows slowly does not grow the file each cycle.
  if (snapshot_need > next.snapshot_slot) next.snapshot_slot = RoundUp(snapshot_need * 3 / 2, 4096);
  if (history_need > next.history_slot) next.history_slot = RoundUp(history_need * 3 / 2, 4096);
  std::unique_ptr<Mapping> m;
  if (next.file_bytes() > sf::kMaxFileBytes ||
      !Mapping::Make("state file", settings_, next, &m).ok()) {
    broken_ = true;
    return false;
  }
  sf::Header* from = map_->header();
  sf::Header* to = m->header();
  to->created_unix_ns = from->created_unix_ns;
  const auto copy_slot = [](char* dst, const char* src) {
    const auto* h = reinterpret_cast<const sf::SlotHeader*>(src);
    std::memcpy(dst, src, sizeof(sf::SlotHeader) + h->length);
  };
  for (int i = 0; i < 2; ++i) copy_slot(m->snapshot_slot(i), map_->snapshot_slot(i));
  for (uint64_t i = 0; i < next.history_slots; ++i) copy_slot(m->history_slot(i), map_->history_slot(i));
  std::memcpy(m->event_slot(0), map_->event_slot(0), kEventSlot * next.event_slots);
  for (uint64_t* f : {&to->snapshots, &to->history_points, &to->events}) {
    const size_t off = reinterpret_cast<char*>(f) - reinterpret_cast<char*>(to);
    sf::Store(f, sf::Load(reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(from) + off)));
  }
  if (committed_ && rename(m->temp_path.c_str(), settings_.path.c_str()) != 0) {
    unlink(m->temp_path.c_str());
    broken_ = true;
    return false;
  }
  m->temp_path.clear();
  sf::Store(&from->state, sf::kReplaced);
  map_ = std::move(m);
  return true;
}

uint64_t StateFileWriter::snapshots() const {
  std::lock_guard lock(mu_);
  return sf::Load(&map_->header()->snapshots);
}

uint64_t StateFileWriter::history_points() const {
  std::lock_guard lock(mu_);
  return history_points_;
}

Status PrepareStateFile(const char* where, Engine& engine, const StateFileSettings& next,
                        StateFileChange* out) {
  auto current = std::dynamic_pointer_cast<StateFileWriter>(engine.state_sink());
  *out = {};
  out->changed = !(current ? current->settings() == next : next.path.empty());
  if (!out->changed || next.path.empty()) return Status::Ok();
  return StateFileWriter::Create(where, engine, next, &out->writer);
}

Status InstallStateFile(const char* where, Engine& engine, StateFileChange change) {
  if (!change.changed) return Status::Ok();
  auto current = std::dynamic_pointer_cast<StateFileWriter>(engine.state_sink());
  if (change.writer) {
    Status s = change.writer->Commit(where);
    if (!s.ok()) return s;
    if (current && current->settings().path == change.writer->settings().path) {
      current->SetFinalState(sf::kReplaced);
    }
    change.writer->OnChange();
  }
  engine.SetStateSink(std::move(change.writer));  // the old writer closes its file as it goes
  return Status::Ok();
}

}  // namespace weighted
