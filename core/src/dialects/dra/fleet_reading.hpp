// A DRA dump read as a fleet, for the DRA unit (unit.cpp): the nodes whose
// GPUs HAMi-DRA publishes take their cards from the slices, and pods'
// claims say what they ask and hold (fleet_reading.cpp).
#pragma once

#include <memory>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/dra/read.hpp"

namespace gpuslice::core::dialects {

// The dump's resource.k8s.io objects, the DRA unit's box in NodeObjects.
struct DraUnitObjects final : UnitObjects {
  dra::DraObjects objects;  // ResourceSlices, DeviceClasses, ResourceClaims and templates
  void take(const codec::ResourceObject& object, const codec::ReadContext& context) override {
    dra::add_resource_object(object, context, objects);
  }
};

// Cards for the nodes no registration gave any, from the slices serving them.
void register_dra_nodes(NodeRegistration& r);

// Each pod's request from its claims, and what a bound one holds through
// their allocations (PodDocument::unit_held, PlacedRole::UnitHeld); a
// pending pod whose claims cannot be read is left out
// (RequestCompletion::left_out).
void complete_dra_requests(RequestCompletion& c);

}  // namespace gpuslice::core::dialects
