// NVIDIA's KAI scheduler with GPU sharing as a policy family: a GPU group
// per shared card (a reservation pod holds it), a fraction or MiB of one
// card's memory per pod, time-slicing and no memory cap by default. Read
// from kai-scheduler/KAI-Scheduler pkg/scheduler (api/node_info,
// gpu_sharing, framework/session.go, plugins gpupack, gpuspread,
// nodeplacement, gpusharingorder, nodeavailability, resourcetype) at the
// commit docs/dialects.md names. Registered as "kai-binpack" (the default
// placement strategy: gpupack + gpusharingorder + nodeplacement binpack)
// and "kai-spread" (gpuspread + nodeplacement spread).
#pragma once

#include <cstdint>
#include <string>

#include "gpuslice/core/policy.hpp"

namespace gpuslice::core {

// What KAI asks of a node for a pod (pod_info.go updatePodAdditionalFields).
struct KaiRequirement {
  enum class Kind { CpuOnly, Regular, Fraction, Memory };
  Kind kind = Kind::CpuOnly;
  int count = 0;           // whole GPUs (Regular) or devices (Fraction, Memory)
  double fraction = 0;     // Fraction: of one GPU's memory
  int64_t memory_mib = 0;  // Memory: MiB of one GPU
  bool shared() const { return kind == Kind::Fraction || kind == Kind::Memory; }
};
// The requirement of a request in KAI's terms (translate.hpp has made it one).
KaiRequirement kai_requirement(const PodRequest& pod);

// One node as KAI's NodeInfo holds it: its GPUs (nvidia.com/gpu
// allocatable: the healthy cards), the memory of every GPU
// (nvidia.com/gpu.memory floored to a multiple of 100 MiB), and per card
// whether it is idle, held whole, or a shared GPU group and how many MiB the
// group's pods take.
struct KaiNode {
  int gpus = 0;
  int idle = 0;            // IdleVector's GPUs
  int64_t gpu_memory = 0;  // MemoryOfEveryGpuOnNode
  struct Group {
    int position = 0;
    int64_t used_mib = 0;  // UsedSharedGPUsMemory
  };
  std::vector<Group> groups;  // by card position
};
KaiNode kai_node(const NodeView& node);
// The same into `out`, reusing its storage (the policy's hot path).
void kai_node(const NodeView& node, KaiNode& out);
// MemoryOfEveryGpuOnNode for a node of these cards: the least healthy card's
// memory floored to a multiple of 100 (KAI assumes one GPU memory per node).
int64_t kai_gpu_memory(const Node& node);
// The MiB one device of the request takes on a node (GetResourceGpuMemory).
int64_t kai_memory_per_device(const KaiRequirement& r, int64_t gpu_memory);

class KaiPolicy final : public Policy, public DeviceFit {
 public:
  explicit KaiPolicy(std::string name, bool spread) : name_(std::move(name)), spread_(spread) {}
  std::string_view name() const override { return name_; }
  Dialect dialect() const override { return Dialect::Kai; }
  // nodeplacement's pre-order: the fleet's least and most non-allocated
  // GPUs (CPU for CPU-only pods) that binpack scores against.
  void begin_pod(const Cluster& cluster, const PodRequest& pod) override;
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override;
  // KAI orders equal scores by node name (sortNodesByName). Within one
  // placement nodes in one state score alike; between placements binpack's
  // scores move with the fleet's range, so none are kept.
  PolicyTraits traits() const override {
    return {.score_reads_only_node_state = true,
            .keys_node_state = false,
            .score_changes_only_with_node = false,
            .ties_by_name = true};
  }
  DeviceFit* device_fit() override { return this; }

  FitResult fit(const NodeView& node, const PodRequest& pod) override;
  bool fits(const NodeView& node, const PodRequest& pod) override;
  bool may_fit(const NodeView& node, const PodRequest& pod) override;
  std::string over_capacity(const NodeView& node) const override;

 private:
  // Whether the node takes the pod (nodes: its KAI view), and the groups
  // that fit a share into fitting_.
  bool takes(const NodeView& node, const PodRequest& pod, const KaiRequirement& r, const KaiNode& k);
  std::string name_;
  bool spread_ = false;
  double min_free_ = 0, max_free_ = 0;  // this pod's pre-order range
  KaiNode node_;                        // scratch
  std::vector<const KaiNode::Group*> fitting_;
};

void register_kai_policies();

}  // namespace gpuslice::core
