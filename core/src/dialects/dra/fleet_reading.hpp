// A DRA dump read as a fleet, for the DRA unit (unit.cpp): the nodes whose
// GPUs HAMi-DRA publishes take their cards from the slices, and pods'
// claims say what they ask and hold (fleet_reading.cpp).
#pragma once

#include <memory>

#include "gpuslice/core/dialects/dialect.hpp"

namespace gpuslice::core::dialects {

// Cards for the nodes no registration gave any, from the slices serving them.
void register_dra_nodes(NodeRegistration& r);

// Each pod's request from its claims, and what a bound one holds through
// their allocations (PodDocument::claim_held); a pending pod whose claims
// cannot be read is left out (RequestCompletion::left_out).
void complete_dra_requests(RequestCompletion& c);

// A bound pod holding its allocated claims (claim_held) is PlacedRole::Dra.
std::unique_ptr<PlacedReading> dra_placed_reading(PlacedContext& context);

}  // namespace gpuslice::core::dialects
