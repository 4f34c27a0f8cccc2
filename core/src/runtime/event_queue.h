// Events (S-P2 alerts, isolation, panic, weight changes) reach the caller two ways: a callback
// and a bounded pollable queue. Both are fed after the engine has released its locks.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "model/pending_event.h"
#include "util/status.h"

namespace weighted {

class EventQueue {
 public:
  explicit EventQueue(size_t capacity) : capacity_(capacity) {}
  ~EventQueue();  // releases the callback's user pointer
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void SetCapacity(size_t capacity);
  // Replaces the callback; the old one's `release` runs once no call of it is running. Refused
  // from inside the callback itself (it would wait for its own return).
  Status SetCallback(wt_event_fn fn, void* user, wt_release_fn release);
  // Queues the events and calls the callback for each, in order. Events raised by calls the
  // callback itself makes are delivered after it returns, on the same thread.
  void Dispatch(const std::string& service, std::vector<PendingEvent>& events);
  // Fills the fields of *out that fit in out->size (at least the 2.0 struct's).
  Status Poll(wt_event* out, int* has_event);
  uint64_t dropped() const;
  uint64_t total() const;

 private:
  struct Owned {
    std::string service;
    PendingEvent ev;
  };
  static wt_event View(const std::string& service, const PendingEvent& ev);

  mutable std::mutex mu_;
  size_t capacity_;
  std::deque<Owned> queue_;
  uint64_t dropped_ = 0;
  uint64_t total_ = 0;

  std::mutex callback_mu_;  // held while calling back, so a callback is never torn down mid-call
  wt_event_fn fn_ = nullptr;
  void* user_ = nullptr;
  wt_release_fn release_ = nullptr;
};

}  // namespace weighted
