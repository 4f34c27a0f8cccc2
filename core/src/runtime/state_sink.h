// Where the engine's state goes after it changes, for a view that lives outside the engine's
// locks (export/state_file.h writes it to a file other processes read). The engine calls it once
// per controller cycle, once per membership change or reload, and once per event batch; never on
// the pick or report path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/pending_event.h"

namespace weighted {

class StateSink {
 public:
  virtual ~StateSink() = default;
  // A controller cycle at engine time `now` has run (history point and snapshot). Called on the
  // cycle's thread after the services' locks were released, with the cycle lock still held, so
  // the cycles' calls come one at a time and in order.
  virtual void OnCycle(int64_t now) = 0;
  // Endpoints were set, a service removed or the config reloaded: the snapshot changed.
  virtual void OnChange() = 0;
  // An event batch was queued, on the thread that delivers it (after the engine's locks).
  virtual void OnEvents(const std::string& service, const std::vector<PendingEvent>& events) = 0;
};

}  // namespace weighted
