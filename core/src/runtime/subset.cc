#include "runtime/subset.h"

#include <algorithm>
#include <numeric>

namespace weighted {

namespace {
uint64_t Fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
uint64_t Mix(uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t RendezvousScore(std::string_view client_id, std::string_view endpoint_id) {
  // The separator keeps ("ab", "c") and ("a", "bc") apart.
  uint64_t h = Fnv1a(0xcbf29ce484222325ull, client_id);
  h = (h ^ 0xff) * 0x100000001b3ull;
  return Mix(Fnv1a(h, endpoint_id));
}

std::vector<uint8_t> ChooseSubset(std::string_view client_id,
                                  const std::vector<std::string_view>& ids, size_t size) {
  std::vector<uint8_t> in(ids.size(), 1);
  if (size >= ids.size()) return in;
  std::vector<uint64_t> score(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) score[i] = RendezvousScore(client_id, ids[i]);
  std::vector<uint32_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0u);
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(size), order.end(),
                   [&](uint32_t a, uint32_t b) {
                     return score[a] != score[b] ? score[a] > score[b] : a < b;
                   });
  std::fill(in.begin(), in.end(), 0);
  for (size_t k = 0; k < size; ++k) in[order[k]] = 1;
  return in;
}

std::vector<uint8_t> ChooseAperture(uint32_t client_index, uint32_t client_count,
                                    const std::vector<std::string_view>& ids, size_t size) {
  const size_t n = ids.size();
  std::vector<uint8_t> in(n, 1);
  if (size >= n || client_count == 0) return in;
  // The ring's order: by a hash of the id (the empty client's rendezvous score), so that ids
  // that sort together (one zone's, one rack's) do not sit together and fall to the same clients.
  std::vector<uint64_t> pos(n);
  for (size_t i = 0; i < n; ++i) pos[i] = RendezvousScore("", ids[i]);
  std::vector<uint32_t> ring(n);
  std::iota(ring.begin(), ring.end(), 0u);
  std::sort(ring.begin(), ring.end(), [&](uint32_t a, uint32_t b) {
    return pos[a] != pos[b] ? pos[a] < pos[b] : ids[a] < ids[b];
  });
  const size_t start = static_cast<size_t>(uint64_t{client_index} * n / client_count);
  std::fill(in.begin(), in.end(), 0);
  for (size_t k = 0; k < size; ++k) in[ring[(start + k) % n]] = 1;
  return in;
}

bool SubsetAppliesTo(const Config::Subset& cfg, std::string_view service) {
  if (cfg.mode == SubsetMode::kOff) return false;
  if (cfg.services.empty()) return true;
  std::string_view rest = cfg.services;
  while (true) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == service) return true;
    if (comma == std::string_view::npos) return false;
    rest.remove_prefix(comma + 1);
  }
}

size_t AutoSubsetSize(const Config::Subset& cfg, uint64_t window_results, size_t endpoints,
                      size_t current) {
  const uint64_t wanted = std::max<uint64_t>(cfg.min_size, window_results / cfg.auto_min_requests);
  const size_t next = static_cast<size_t>(std::min<uint64_t>(wanted, endpoints));
  if (current == 0) return next;
  const size_t now = std::min(current, endpoints);
  // Within a quarter of the current size: keep it.
  if (4 * next < 5 * now && 4 * next > 3 * now) return now;
  return next;
}

}  // namespace weighted
