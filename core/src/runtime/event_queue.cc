#include "runtime/event_queue.h"

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

wt_event EventQueue::View(const Owned& o) {
  return {sizeof(wt_event), o.ev.type, o.ev.time_ns, o.service.c_str(), o.ev.endpoint.c_str(),
          o.ev.old_weight, o.ev.new_weight, o.ev.reason.c_str()};
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
    Owned o{std::move(pending.front().first), std::move(pending.front().second)};
    pending.pop_front();
    const wt_event view = View(o);
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
  polled_ = std::move(queue_.front());
  queue_.pop_front();
  const uint32_t size = out->size;  // the caller's: a newer library writes no field it lacks
  *out = View(polled_);
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
