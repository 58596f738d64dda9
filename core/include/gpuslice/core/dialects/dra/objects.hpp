// DRA's objects (resource.k8s.io/v1) as gpuslice reads them from a kubectl
// dump: ResourceSlices, DeviceClasses, ResourceClaims and their templates,
// and what a pod says of its claims. Only the fields the structured
// allocator and the simulator read are kept. Quantities in milli-units.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuslice/core/dialects/dra/device.hpp"

namespace gpuslice::core::dra {

// A node selector as DRA's slices and allocations carry it (core/v1 NodeSelector):
// terms are ORed, requirements within a term ANDed.
struct NodeSelectorRequirement {
  std::string key, op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool field = false;  // matchFields (metadata.name) rather than matchExpressions
};
struct NodeSelector {
  std::vector<std::vector<NodeSelectorRequirement>> terms;
};

struct ResourceSlice {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t generation = 0;
  int64_t resource_slice_count = 1;
  // Which nodes it serves: exactly one of these in the API.
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;
  int line = 0;  // where it was read, for errors
};

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions
  std::string extended_resource_name;  // spec.extendedResourceName (KEP-5004); "" when none
};

// capacity.requests: qualified capacity name as written -> milli-units.
using CapacityRequests = std::vector<std::pair<std::string, int64_t>>;

enum class AllocationMode : uint8_t { ExactCount, All };

// The part shared by `exactly` and a `firstAvailable` subrequest.
struct ExactRequest {
  std::string device_class;
  std::vector<std::string> selectors;  // CEL expressions
  AllocationMode mode = AllocationMode::ExactCount;
  int64_t count = 1;
  bool admin_access = false;
  CapacityRequests capacity;
};

struct SubRequest {
  std::string name;
  ExactRequest spec;
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactRequest> exactly;
  std::vector<SubRequest> first_available;  // used when `exactly` is absent
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: all requests of the claim
  std::string match_attribute;        // fully qualified; "" when none
  std::string distinct_attribute;     // fully qualified; "" when none
};

struct ClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
};

// One device of an allocation (status.allocation.devices.results[]).
struct DeviceResult {
  std::string request;  // "req" or "req/subreq"
  std::string driver, pool, device;
  bool shared = false;                 // has a shareID (a device allowing multiple allocations)
  CapacityRequests consumed_capacity;  // shared devices only
  bool admin_access = false;
};

struct Allocation {
  std::vector<DeviceResult> results;
  std::string node_name;  // the node the allocation is bound to ("" when it selects none)
};

struct ResourceClaim {
  std::string namespace_name, name;
  ClaimSpec spec;
  std::optional<Allocation> allocation;
  int line = 0;
};

struct ResourceClaimTemplate {
  std::string namespace_name, name;
  ClaimSpec spec;
  int line = 0;
};

// A pod's spec.resourceClaims[] entry, and the claim it resolved to.
struct PodClaimRef {
  std::string name;
  std::string claim_name;     // resourceClaimName
  std::string template_name;  // resourceClaimTemplateName
  std::string generated;      // status.resourceClaimStatuses[].resourceClaimName
};

}  // namespace gpuslice::core::dra
