// A service's endpoint set as installed by one set_endpoints call. Immutable once published;
// it changes only with set_endpoints, so the snapshots of many cycles share it.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pick/roster.h"
#include "runtime/endpoint.h"
#include "weighted/weighted.h"

namespace weighted {

struct Membership : Roster {
  Membership() = default;
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;
  // The last snapshot holding this set is gone, so no pick can return its user pointers.
  ~Membership() {
    if (!release) return;
    for (const RosterEntry& e : entries) {
      if (e.user) release(e.user);
    }
  }

  wt_release_fn release = nullptr;    // for the entries' user pointers (wt_endpoints_options)
  std::vector<Endpoint*> endpoints;   // by index (the caller's order)
  std::vector<Endpoint*> by_slot;     // by key slot, for report()
  std::unordered_map<std::string_view, Endpoint*> by_id;

  // Looks a key up; nullptr if the endpoint is not (or no longer) in this set.
  Endpoint* Find(uint64_t key) const {
    const uint64_t slot = key & 0xffffffffu;
    Endpoint* ep = slot < by_slot.size() ? by_slot[slot] : nullptr;
    return ep && ep->key == key ? ep : nullptr;
  }
  Endpoint* Find(std::string_view id) const {
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : it->second;
  }
};

}  // namespace weighted
