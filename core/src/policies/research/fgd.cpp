// FGD: the placement that grows fragmentation least (see fragmentation.hpp).
// Score = fragment of the node before - after; for a sharing pod every card
// is tried. A node's fragment before is kept until its usage changes.
#include <unordered_map>

#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class FgdPolicy final : public Policy {
 public:
  explicit FgdPolicy(const PolicyArgs& args) : model_(args.typical_pods) {
    default_gpu_policy_ = args.gpu_policy;
  }
  std::string_view name() const override { return "fgd"; }
  bool chooses_share_card() const override { return true; }
  bool score_reads_only_node_state() const override { return !model_.empty(); }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    if (model_.empty()) {
      // No workload to learn from: the pod at hand is the typical pod.
      FragmentationModel own({TypicalPod{pod, 1.0}});
      return delta(own, node, pod, allocation, own.node_fragment(node));
    }
    if (before_.size() <= node.id) before_.resize(node.id + 1, {UINT64_MAX, 0});
    auto& cached = before_[node.id];
    if (cached.first != node.version || shape_of_.size() <= node.id || shape_of_[node.id] != node.shape) {
      if (shape_of_.size() <= node.id) shape_of_.resize(node.id + 1, UINT32_MAX);
      shape_of_[node.id] = node.shape;
      cached = {node.version, model_.node_fragment(node)};
    }
    return delta(model_, node, pod, allocation, cached.second);
  }

 private:
  static NodeScore delta(FragmentationModel& model, const NodeView& node, const PodRequest& pod,
                         const PodAllocation& allocation, double before) {
    UsageAfter after;
    if (!usage_after(node, allocation, after)) return {0, 0};
    HostResources host = node.host_used;
    host.cpu_milli += pod.host.cpu_milli;
    host.memory_mib += pod.host.memory_mib;
    const double gain = before - model.node_fragment(node, after.span(), host);
    return {gain, gain};
  }

  FragmentationModel model_;
  std::vector<std::pair<uint64_t, double>> before_;  // node -> (version, fragment)
  std::vector<uint32_t> shape_of_;
};

}  // namespace

void register_fgd() {
  register_policy("fgd", [](const PolicyArgs& a) { return std::make_unique<FgdPolicy>(a); });
}

}  // namespace gpuslice::core::research
