// HAMi's own policy: rank nodes by usage before the pod (binpack: fullest
// first; spread: emptiest first), cards by HAMi's GPU policy.
#include "gpuslice/core/dialects/hami/policy.hpp"

namespace gpuslice::core {

HamiPolicy::HamiPolicy(HamiPolicyConfig config) : config_(std::move(config)) {
  default_gpu_policy_ = config_.gpu_policy;
}

std::string_view HamiPolicy::hami_node_policy(const PodRequest& pod) const {
  if (!config_.override_pod_node_policy && !pod.node_policy.empty()) return pod.node_policy;
  return config_.node_policy;
}

std::string HamiPolicy::gpu_policy_for(const PodRequest& pod) const {
  if (!config_.override_pod_gpu_policy && !pod.gpu_policy.empty()) return pod.gpu_policy;
  return config_.gpu_policy;
}

double HamiPolicy::node_key(const NodeView& node) const { return hami_node_score(node); }

// HAMi: only the exact value "spread" prefers low scores; anything else is binpack.
int HamiPolicy::rank_sign(const PodRequest& pod) const { return hami_node_policy(pod) == "spread" ? -1 : 1; }

void register_hami_policies() {
  register_policy("hami", [](const PolicyArgs& a) {
    return std::make_unique<HamiPolicy>(HamiPolicyConfig{"binpack", a.gpu_policy, false, false, "hami"});
  });
  register_policy("hami-binpack", [](const PolicyArgs& a) {
    return std::make_unique<HamiPolicy>(
        HamiPolicyConfig{"binpack", a.gpu_policy, false, false, "hami-binpack"});
  });
  register_policy("hami-spread", [](const PolicyArgs& a) {
    return std::make_unique<HamiPolicy>(
        HamiPolicyConfig{"spread", a.gpu_policy, false, false, "hami-spread"});
  });
}

}  // namespace gpuslice::core
