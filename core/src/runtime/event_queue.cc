#include "runtime/event_queue.h"

#include <algorithm>
#include <memory>

namespace weighted {

namespace {
// The queue whose callback this thread is running, and the events raised meanwhile by calls the
// callback made into the same engine (a reload, an advance): they are delivered after the
// current one returns, in order, on this thread. Taking callback_mu_ again would deadlock.
struct Delivery {
  const EventQueue* queue = nullptr;
  std::deque<std::pair<std::string, PendingEvent>>* pending = nullptr;
};
thread_local Delivery t_delivery;

// Backs the strings of the events a thread polled, one slot per engine (most recent first): a
// poll on another thread must not free them under this one.
constexpr size_t kPolledSlots = 8;
struct PolledSlot {
  const EventQueue* queue;
  std::unique_ptr<std::pair<std::string, PendingEvent>> event;
};
thread_local std::vector<PolledSlot> t_polled;

std::pair<std::string, PendingEvent>& PolledSlotFor(const EventQueue* q) {
  for (size_t i = 0; i < t_polled.size(); ++i) {
    if (t_polled[i].queue == q) {
      std::rotate(t_polled.begin(), t_polled.begin() + i, t_polled.begin() + i + 1);
      return *t_polled.front().event;
    }
  }
  if (t_polled.size() == kPolledSlots) t_polled.pop_back();  // the least recently polled engine
  t_polled.insert(t_polled.begin(),
                  {q, std::make_unique<std::pair<std::string, PendingEvent>>()});
  return *t_polled.front().event;
}
}  // namespace

void EventQueue::SetCapacity(size_t capacity) {
  std::lock_guard lock(mu_);
  capacity_ = capacity;
  while (queue_.size() > capacity_) {
    queue_.pop_front();
    ++dropped_;
  }
}

EventQueue::~EventQueue() {
  if (release_) release_(user_);
}

Status EventQueue::SetCallback(wt_event_fn fn, void* user, wt_release_fn release) {
  if (t_delivery.queue == this) {
    return InvalidArgument("wt_engine_set_event_callback: called from inside the engine's own "
                           "event callback; set it from another place");
  }
  wt_release_fn old_release;
  void* old_user;
  {
    std::lock_guard lock(callback_mu_);  // waits for a running call: the old callback is done
    old_release = release_;
    old_user = user_;
    fn_ = fn;
    user_ = user;
    release_ = release;
  }
  if (old_release) old_release(old_user);
  return Status::Ok();
}

wt_event EventQueue::View(const std::string& service, const PendingEvent& ev) {
  return {sizeof(wt_event), ev.type, ev.time_ns, service.c_str(), ev.endpoint.c_str(),
          ev.old_weight, ev.new_weight, ev.reason.c_str()};
}

void EventQueue::Dispatch(const std::string& service, std::vector<PendingEvent>& events) {
  if (events.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (const PendingEvent& e : events) {
      ++total_;
      // Oldest first out: the newest events describe the state in force.
      if (queue_.size() >= capacity_) {
        queue_.pop_front();
        ++dropped_;
      }
      queue_.push_back({service, e});
    }
  }
  if (t_delivery.queue == this) {
    for (const PendingEvent& e : events) t_delivery.pending->emplace_back(service, e);
    return;
  }
  std::lock_guard lock(callback_mu_);
  if (!fn_) return;
  std::deque<std::pair<std::string, PendingEvent>> pending;
  for (const PendingEvent& e : events) pending.emplace_back(service, e);
  const Delivery outer = t_delivery;  // another engine's callback may have called into this one
  t_delivery = {this, &pending};
  while (!pending.empty()) {
    const std::pair<std::string, PendingEvent> e = std::move(pending.front());
    pending.pop_front();
    const wt_event view = View(e.first, e.second);
    fn_(user_, &view);
  }
  t_delivery = outer;
}

Status EventQueue::Poll(wt_event* out, int* has_event) {
  std::lock_guard lock(mu_);
  if (queue_.empty()) {
    *has_event = 0;
    return Status::Ok();
  }
  auto& slot = PolledSlotFor(this);
  slot.first = std::move(queue_.front().service);
  slot.second = std::move(queue_.front().ev);
  queue_.pop_front();
  const uint32_t size = out->size;  // the caller's: a newer library writes no field it lacks
  *out = View(slot.first, slot.second);
  out->size = size;
  *has_event = 1;
  return Status::Ok();
}

uint64_t EventQueue::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

uint64_t EventQueue::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

}  // namespace weighted
