// Service's pinned snapshot, shared by the files that make up Service (service.cc,
// service_reports.cc): internal to them.
#pragma once

#include "runtime/reclaim.h"
#include "runtime/service.h"

namespace weighted {

// Pins the current snapshot for one hot-path call.
struct Service::Guarded {
  explicit Guarded(Service& s)
      : reader(s.reclaimer_.ThisThread()), guard(s.reclaimer_, reader),
        snap(s.snapshot_.load(std::memory_order_seq_cst)) {}
  Reclaimer::Reader& reader;
  Reclaimer::Guard guard;
  const Snapshot* snap;
};

}  // namespace weighted
