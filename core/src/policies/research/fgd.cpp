// FGD: the placement that grows fragmentation least (see fragmentation.hpp).
// "fgd" scores as the study's artifact does (pkg/simulator/plugin/
// fgd_score.go): int64(sigmoid((before - after) / 1000) x 100), so small
// differences tie and go to the node listed first; for a sharing pod every
// fitting card is tried and the first with the top score wins.
// "fgd-exact" ranks by the exact decrease (our variant; see
// docs/reproduction.md for how the two compare). A node's fragment before
// is kept until its usage changes.
#include <cmath>
#include <memory>

#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class FgdPolicy final : public Policy {
 public:
  FgdPolicy(const PolicyArgs& args, bool exact)
      : model_(args.fragmentation ? args.fragmentation
                                  : std::make_shared<FragmentationModel>(args.typical_pods)),
        exact_(exact) {
    default_gpu_policy_ = args.gpu_policy;
  }
  std::string_view name() const override { return exact_ ? "fgd-exact" : "fgd"; }
  CardChooser* card_chooser() override { return &card_; }
  // Without typical pods the pod at hand is the typical pod: its score
  // depends on the pod, so nothing is skipped or kept.
  PolicyTraits traits() const override {
    return model_->empty() ? PolicyTraits{} : PolicyTraits::node_state_only();
  }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    if (model_->empty()) {
      // No workload to learn from: the pod at hand is the typical pod.
      FragmentationModel own({TypicalPod{pod, 1.0}});
      return delta(own, node, pod, allocation, own.node_fragment(node));
    }
    if (before_.size() <= node.id) before_.resize(node.id + 1, {UINT64_MAX, 0});
    auto& cached = before_[node.id];
    if (cached.first != node.version || shape_of_.size() <= node.id || shape_of_[node.id] != node.shape) {
      if (shape_of_.size() <= node.id) shape_of_.resize(node.id + 1, UINT32_MAX);
      shape_of_[node.id] = node.shape;
      cached = {node.version, model_->node_fragment(node)};
    }
    return delta(*model_, node, pod, allocation, cached.second);
  }

 private:
  NodeScore delta(FragmentationModel& model, const NodeView& node, const PodRequest& pod,
                  const PodAllocation& allocation, double before) {
    if (!usage_after(node, allocation, after_)) return {0, 0};
    HostResources host = node.host_used;
    host.cpu_milli += pod.host.cpu_milli;
    host.memory_mib += pod.host.memory_mib;
    const double gain = before - model.node_fragment(node, after_.span(), host);
    if (exact_) return {gain, gain};
    const double score = go_int64(1.0 / (1.0 + std::exp(-(gain / 1000))) * 100);
    return {score, score};
  }

  std::shared_ptr<FragmentationModel> model_;
  bool exact_;
  std::vector<std::pair<uint64_t, double>> before_;  // node -> (version, fragment)
  std::vector<uint32_t> shape_of_;
  UsageAfter after_;  // scratch: the candidate charged
  FirstTopCard card_;
};

}  // namespace

void register_fgd() {
  register_policy("fgd", [](const PolicyArgs& a) { return std::make_unique<FgdPolicy>(a, false); });
  register_policy("fgd-exact", [](const PolicyArgs& a) { return std::make_unique<FgdPolicy>(a, true); });
}

}  // namespace gpuslice::core::research
