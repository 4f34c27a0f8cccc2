#include "model/pending_event.h"

namespace weighted {

const char* EventTypeName(int type) {
  switch (type) {
    case WT_EVENT_WEIGHT_CHANGED: return "weight_changed";
    case WT_EVENT_ISOLATED: return "isolated";
    case WT_EVENT_RESTORED: return "restored";
    case WT_EVENT_FORCED_RESTORE: return "forced_restore";
    case WT_EVENT_PANIC_ENTER: return "panic_enter";
    case WT_EVENT_PANIC_EXIT: return "panic_exit";
    case WT_EVENT_ENDPOINT_ADDED: return "endpoint_added";
    case WT_EVENT_ENDPOINT_REMOVED: return "endpoint_removed";
    case WT_EVENT_CONFIG_RELOADED: return "config_reloaded";
    case WT_EVENT_SERVICE_REMOVED: return "service_removed";
    case WT_EVENT_SOURCE_STALE: return "source_stale";
    case WT_EVENT_SOURCE_FRESH: return "source_fresh";
    case WT_EVENT_BUDGET_MISSED: return "budget_missed";
    case WT_EVENT_BUDGET_MET: return "budget_met";
    case WT_EVENT_GUARD: return "guard";
    case WT_EVENT_STATE_CHANGED: return "state_changed";
  }
  return nullptr;
}

}  // namespace weighted
