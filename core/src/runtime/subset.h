// Subsetting: which of a service's endpoints this client uses (config "subset").
//
// Rendezvous (highest-random-weight) hashing, as gRFC A68's random subsetting: each endpoint
// scores hash(client id, endpoint id) and the client keeps the `size` highest. The choice is a
// function of the client id and the set alone, so it is deterministic across restarts and
// processes; an endpoint added or removed changes at most one entry of any client's subset
// (it enters only by beating the lowest kept score, and leaving frees one place), which
// Google SRE's deterministic subsetting does not offer (a new backend reshuffles its rounds).
// Its price is balance: per-endpoint client counts spread binomially, which the load-aware
// picker partly evens out (docs/benchmark.md, "A fleet of engines"). Where the deployment knows
// the fleet's size and each client's place in it, the aperture below spreads them evenly.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace weighted {

// The endpoint's score for this client: a 64-bit mix of both ids (FNV-1a then splitmix64's
// finaliser, so that ids differing in one character still score independently).
uint64_t RendezvousScore(std::string_view client_id, std::string_view endpoint_id);

// in[i] = 1 for the `size` endpoints of `ids` with the highest scores (every endpoint when
// size >= ids.size()); ties, which need equal 64-bit scores, go to the lower index.
std::vector<uint8_t> ChooseSubset(std::string_view client_id,
                                  const std::vector<std::string_view>& ids, size_t size);

// Deterministic aperture, as Finagle's, for a fleet whose size is known: `client_count` clients,
// this one at `client_index`. The endpoints sit on a ring in the order of a hash of their ids,
// and each client takes `size` consecutive ones from its own place, client_index / client_count
// of the way round. Every endpoint is then used by client_count x size / n clients, one more or
// one fewer at most (exactly that many when the ratio is whole), where rendezvous spreads the
// count binomially (12 of 50 endpoints per client, 100 clients: from about 15 to 35 where the
// mean is 24). An endpoint added or removed shifts the ring by one place and moves a client's
// start by at most one, so at most one entry of its window is replaced.
std::vector<uint8_t> ChooseAperture(uint32_t client_index, uint32_t client_count,
                                    const std::vector<std::string_view>& ids, size_t size);

// Whether `cfg.services` (comma-separated, "" = every service) names `service`.
bool SubsetAppliesTo(const Config::Subset& cfg, std::string_view service);

// Auto mode's size: the service's results over the last window divided by auto_min_requests,
// at least min_size, at most `endpoints`. `current` (0: none yet) is kept unless the new size
// differs from it by a quarter or more, so that noise in the traffic does not churn the subset.
size_t AutoSubsetSize(const Config::Subset& cfg, uint64_t window_results, size_t endpoints,
                      size_t current);

}  // namespace weighted
