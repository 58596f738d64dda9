// A DRA dump as a fleet: the cards of nodes whose GPUs HAMi-DRA publishes
// in ResourceSlices, what running pods hold through their allocated
// ResourceClaims, and what pending pods' claims (or templates) ask, in the
// one request model. The simulator then allocates with `--policy dra`
// (policy.hpp), which runs the structured allocator over these cards as
// HAMi-DRA devices of the same driver/pool/device names.
//
// What is modelled (docs/dialects.md, "A DRA dump as a fleet"): devices of
// HAMi-DRA's driver that allow multiple allocations and have a `memory`
// capacity; claims whose requests are `exactly`, on HAMi-DRA's class,
// count-based, asking only `memory` and `cores` capacity, with no other
// selector than the webhook's and no constraints. Anything else is named:
// a node's other devices in a warning, a pending pod's claim as the reason
// it is left out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/dialects/dra/allocator.hpp"
#include "gpuslice/core/dialects/dra/read.hpp"
#include "gpuslice/core/model.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core::dra {

// A card's uuid under DRA: the device's key "driver/pool/device", so every
// output naming cards (pods.csv's `cards`, allocations) names DRA devices.
std::string device_key(std::string_view driver, std::string_view pool, std::string_view device);
struct DeviceKey {
  std::string driver, pool, device;
};
// The key split back (nullopt: not of that form).
std::optional<DeviceKey> split_device_key(std::string_view uuid);

// The slices of a dump indexed by the node they serve.
class SliceIndex {
 public:
  explicit SliceIndex(const std::vector<ResourceSlice>& slices);
  // The slices `node` sees: its own, then those for all nodes or by selector.
  std::vector<const ResourceSlice*> for_node(const NodeInfo& node) const;
  bool empty() const { return by_node_.empty() && shared_.empty(); }

 private:
  std::unordered_map<std::string, std::vector<const ResourceSlice*>> by_node_;
  std::vector<const ResourceSlice*> shared_;
};

// The cards of `node` from its pools, in the allocator's order (pools by
// driver and name, slices by name, devices in order): one card per HAMi-DRA
// device. Other devices are named in `warnings` (not simulated).
std::vector<core::Device> cards_from_slices(const SliceIndex& slices, const NodeInfo& node,
                                            const std::string& source, int line,
                                            std::vector<std::string>& warnings);

// A pod's claims resolved against the dump: the spec each asks and, for an
// allocated claim, its allocation. `missing` names a claim the dump lacks.
struct ResolvedClaim {
  std::string name;  // namespace/name of the claim, or of the template when none was generated
  const ClaimSpec* spec = nullptr;
  const Allocation* allocation = nullptr;
  int line = 0;  // where the claim (or template) was read
};
struct ResolvedClaims {
  std::vector<ResolvedClaim> claims;
  std::string missing;  // "" when every claim was found
};
// Claims and templates by namespace/name, for resolving pods' references.
class ClaimIndex {
 public:
  explicit ClaimIndex(const DraObjects& objects);
  ResolvedClaims resolve(const std::string& pod_namespace, const std::vector<PodClaimRef>& refs) const;

 private:
  std::unordered_map<std::string, const ResourceClaim*> claims_;
  std::unordered_map<std::string, const ResourceClaimTemplate*> templates_;
};

// The pod's GPU asks from its claims: one container ask per request (count,
// memory in MiB rounded up, cores), put on the pod's containers in order
// (extra ones appended, named after the request). Returns why the claims
// cannot be said in the request model ("" when they can).
std::string request_from_claims(const std::vector<ResolvedClaim>& claims, PodRequest& request);

// What a running pod holds on `node` through its claims' allocations: one
// grant per device result on the container asking it (the consumed
// capacity; a device not shared: the whole card). A request whose ask is
// not in `request` (its claim's spec was not modelled) asks what it holds.
// Returns why a result cannot be counted ("" when all were), e.g. a device
// the node does not have.
std::string held_from_allocations(const std::vector<ResolvedClaim>& claims, const core::Node& node,
                                  PodRequest& request, PodAllocation& allocation);

// The claim's allocation result in compact JSON, as status.allocation says
// it (devices.results with request, driver, pool, device, consumedCapacity),
// from a pod's grants on `node`; "" when the pod holds no card.
std::string allocation_result_json(const core::Node& node, const PodAllocation& allocation);

}  // namespace gpuslice::core::dra
