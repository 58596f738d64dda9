// Koordinator's DeviceShare plugin (koord-scheduler) as a policy family:
// its GPU requirement, its fit and device choice (partition table,
// topology tree, score-ordered fallback) and its node score, read from
// koordinator-sh/koordinator pkg/scheduler/plugins/deviceshare at the
// commit docs/dialects.md names. Registered as "koordinator"
// (LeastAllocated, the default), "koordinator-most" (MostAllocated) and
// "koordinator-fixed" / "koordinator-most-fixed" (shared-GPU device scoring
// as PR #3074 fixes it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/policy.hpp"

namespace gpuslice::core {

struct KoordinatorConfig {
  std::string name = "koordinator";
  bool most_allocated = false;  // ScoringStrategy MostAllocated (default LeastAllocated)
  // Koordinator #3073: allocateFromScope scores shared-GPU candidates with
  // total and free swapped. false reproduces the code; true is PR #3074.
  bool fixed_device_scoring = false;
};

// What DeviceShare asks of each GPU (calcDesiredRequestsAndCountForGPU's
// result): per-GPU resources, absent when the pod does not ask them.
struct KoordinatorRequirement {
  int count = 0;  // numberOfGPUs
  std::optional<int64_t> core, ratio, bytes;
  bool shared = false;  // gpuShared: a ratio under 100, or memory in bytes
};

// The requirement of a request in Koordinator's terms (translate.hpp has
// made it one): the first container asking for cards carries it; nullopt
// when the pod asks none.
std::optional<KoordinatorRequirement> koordinator_requirement(const PodRequest& pod);

// One card as DeviceShare counts it: its Device CR resources (all zero when
// unhealthy) and what is free of them (total minus the grants held, never
// below 0).
struct KoordinatorCard {
  int position = 0;  // in Node::devices
  int minor = 0;     // Device::index
  int64_t total_core = 0, total_bytes = 0, total_ratio = 0;
  int64_t free_core = 0, free_bytes = 0, free_ratio = 0;
  bool used = false;  // some pod holds part of it (the deviceUsed minors)
  bool in_total() const { return total_core != 0 || total_bytes != 0 || total_ratio != 0; }
  bool satisfies(const KoordinatorRequirement& r) const;
};
std::vector<KoordinatorCard> koordinator_cards(const NodeView& node);

// resourceAllocationScorer over gpu-memory-ratio and gpu-memory (weight 1
// each, DeviceShareArgs' defaults): one card (scoreDevice) and a node's
// cards together (scoreNode), 0..100.
int64_t koordinator_device_score(const KoordinatorRequirement& r, bool most_allocated, int64_t total_ratio,
                                 int64_t total_bytes, int64_t free_ratio, int64_t free_bytes);
int64_t koordinator_node_score(const KoordinatorRequirement& r, bool most_allocated,
                               const std::vector<KoordinatorCard>& cards);

class KoordinatorPolicy final : public Policy, public DeviceFit {
 public:
  explicit KoordinatorPolicy(KoordinatorConfig config) : config_(std::move(config)) {}
  std::string_view name() const override { return config_.name; }
  Dialect dialect() const override { return Dialect::Koordinator; }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override;
  PolicyTraits traits() const override { return PolicyTraits::node_state_only(); }
  DeviceFit* device_fit() override { return this; }

  FitResult fit(const NodeView& node, const PodRequest& pod) override;
  bool may_fit(const NodeView& node, const PodRequest& pod) override;
  std::string over_capacity(const NodeView& node) const override;

 private:
  KoordinatorConfig config_;
};

void register_koordinator_policies();

}  // namespace gpuslice::core
