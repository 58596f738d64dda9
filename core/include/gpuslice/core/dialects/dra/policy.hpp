// `--policy dra`: HAMi's pods on a cluster whose GPUs HAMi-DRA publishes,
// placed as kube-scheduler's default profile places them. Filter: the
// NodeResourcesFit host check, then DRA's structured allocator over the
// node's GPUs as HAMi-DRA devices (each container's claim as HAMi-DRA's
// webhook writes it; all claims of the pod allocated together, first full
// solution, no device scoring). Score: NodeResourcesFit (LeastAllocated,
// cpu and memory, weight 1) plus NodeResourcesBalancedAllocation (weight 1);
// DynamicResources scores only firstAvailable choices, which these claims do
// not have. What is approximated is listed in docs/dialects.md (DRA).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "gpuslice/core/dialects/dra/allocator.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::dra {

class DraPolicy : public Policy, public DeviceFit {
 public:
  DraPolicy();
  ~DraPolicy() override;
  std::string_view name() const override { return "dra"; }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override;
  PolicyTraits traits() const override { return PolicyTraits::node_state_only(); }
  DeviceFit* device_fit() override { return this; }

  FitResult fit(const NodeView& node, const PodRequest& pod) override;
  std::string over_capacity(const NodeView& node) const override;

 private:
  struct NodeDevices;
  const NodeDevices& devices_of(const NodeView& node);
  bool enough_devices(const NodeView& node, const PodRequest& pod, int64_t card_memory) const;

  std::vector<DeviceClass> classes_;
  CelCache cache_;
  StructuredAllocator allocator_;
  std::unordered_map<const Node*, std::unique_ptr<NodeDevices>> nodes_;
};

// kube-scheduler's default-profile score for a node (cpu and memory, with
// the pod): LeastAllocated + BalancedAllocation, each 0..100.
int64_t default_profile_score(const HostResources& capacity, const HostResources& used,
                              const HostResources& pod);

void register_dra_policies();

}  // namespace gpuslice::core::dra
