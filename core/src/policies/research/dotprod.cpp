// DotProd (Tetris), as the study runs it (pkg/simulator/plugin/
// dot_product_score.go with -dimext merge -norm max): two dimensions, free
// CPU and the node's total free GPU, node and pod vectors both divided by
// the largest node spec (128 cores, 8 GPUs);
//   score = int64(100 x (1 - dot / 2)), higher is better
// (the less the node's free resources align with the pod, the better). With
// "merge" the card is chosen best-fit (gpuSelMethod best).
#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class DotProdPolicy final : public Policy {
 public:
  explicit DotProdPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "dotprod"; }
  CardChooser* card_chooser() override { return &card_; }
  PolicyTraits traits() const override { return PolicyTraits::node_state_only(); }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    usage_after(node, allocation, after_);
    const double free[2] = {cpu_left(node) / kMaxSpecCpuMilli,
                            static_cast<double>(node_free_milli(node)) / kMaxSpecGpuMilli};
    const double want[2] = {static_cast<double>(pod.host.cpu_milli) / kMaxSpecCpuMilli,
                            static_cast<double>(requested_milli(node, after_)) / kMaxSpecGpuMilli};
    double dot = 0;
    for (int i = 0; i < 2; ++i) dot += free[i] * want[i];
    const double score = go_int64(100.0 * (1 - dot / 2));
    return {score, score};
  }

 private:
  UsageAfter after_;  // scratch: the candidate charged
  BestFitCard card_;
};

}  // namespace

void register_dotprod() {
  register_policy("dotprod", [](const PolicyArgs& a) { return std::make_unique<DotProdPolicy>(a); });
}

}  // namespace gpuslice::core::research
