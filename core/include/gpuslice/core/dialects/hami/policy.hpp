// HAMi's node policy (binpack | spread) and GPU policy as one Policy.
#pragma once

#include <string>

#include "gpuslice/core/policy.hpp"

namespace gpuslice::core {

struct HamiPolicyConfig {
  std::string node_policy = "binpack";  // scheduler default (HAMi flag)
  std::string gpu_policy = "spread";    // scheduler default (HAMi flag)
  // True when an operator's explicit choice (e.g. a CLI flag) must win over
  // the pod's hami.io/*-scheduler-policy annotations.
  bool override_pod_node_policy = false;
  bool override_pod_gpu_policy = false;
  std::string name = "hami";
};

class HamiPolicy final : public KeyRankedPolicy {
 public:
  explicit HamiPolicy(HamiPolicyConfig config = {});
  std::string_view name() const override { return config_.name; }
  std::string_view hami_node_policy(const PodRequest& pod) const override;
  std::string gpu_policy_for(const PodRequest& pod) const override;
  double node_key(const NodeView& node) const override;
  int rank_sign(const PodRequest& pod) const override;

 private:
  HamiPolicyConfig config_;
};

void register_hami_policies();

}  // namespace gpuslice::core
