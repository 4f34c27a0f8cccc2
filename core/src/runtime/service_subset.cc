// Service::ChooseSubset: which of the service's endpoints this client uses (runtime/subset.h),
// kept apart from service.cc, which holds the hot path and the cycle.
#include "runtime/service.h"

#include <algorithm>

#include "runtime/subset.h"

namespace weighted {

void Service::ChooseSubset(const Config& cfg) {
  // The service's results over the last window, as the last cycle computed them.
  uint64_t window_results = 0;
  for (const Endpoint* ep : endpoints_) window_results += ep->ctl.stats.requests;
  const size_t n = endpoints_.size();
  size_t size = n;
  if (SubsetAppliesTo(cfg.subset, name_)) {
    size = cfg.subset.mode == SubsetMode::kFixed
               ? std::min<size_t>(cfg.subset.size, n)
               : AutoSubsetSize(cfg.subset, window_results, n, subset_size_);
  }
  const uint64_t place = (uint64_t{cfg.subset.client_count} << 32) | cfg.subset.client_index;
  if (size == subset_size_ && epoch_ == chosen_epoch_ && cfg.subset.client_id == chosen_for_ &&
      place == chosen_place_ && size < n) {
    return;  // the same set, size and client: the same subset (either choice is a function of them)
  }
  chosen_epoch_ = epoch_;
  chosen_for_ = cfg.subset.client_id;
  chosen_place_ = place;
  active_.clear();
  active_index_.clear();
  if (size >= n) {
    // No subset, or one that holds every endpoint: nothing to choose.
    subset_size_ = SubsetAppliesTo(cfg.subset, name_) ? n : 0;
    for (uint32_t i = 0; i < n; ++i) {
      endpoints_[i]->in_subset = true;
      active_.push_back(&endpoints_[i]->ctl);
      active_index_.push_back(i);
    }
    return;
  }
  std::vector<std::string_view> ids;
  ids.reserve(n);
  for (const Endpoint* ep : endpoints_) ids.push_back(ep->id);
  const std::vector<uint8_t> in =
      cfg.subset.client_count > 0
          ? ChooseAperture(cfg.subset.client_index, cfg.subset.client_count, ids, size)
          : weighted::ChooseSubset(cfg.subset.client_id, ids, size);
  subset_size_ = size;
  for (uint32_t i = 0; i < n; ++i) {
    Endpoint& ep = *endpoints_[i];
    if (ep.in_subset && !in[i]) {
      // Leaving: what it showed is history. Back in the subset it starts unknown, like a
      // newcomer, rather than judged on a window from before it left.
      ep.ctl.window.Clear();
      ep.ctl.stats = WindowStats{};
      ep.ctl.known = false;
      ep.ctl.has_held = false;
      ep.ctl.evidence = Evidence::kNone;
      ep.ctl.burst_from = 0;
    }
    ep.in_subset = in[i] != 0;
    if (!in[i]) continue;
    active_.push_back(&endpoints_[i]->ctl);
    active_index_.push_back(i);
  }
}

}  // namespace weighted
