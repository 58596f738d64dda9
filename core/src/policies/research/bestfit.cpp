// BestFit, as the study's artifact scores it (pkg/simulator/plugin/
// best_fit_score.go): the node left with least, as
//   int64(100 x (1 - sum_i 0.5 x (free_i - request_i) / maxSpec_i))
// over CPU and GPU (maxSpec: a 128-core, 8-GPU node); higher is better. Its
// min-max normalisation keeps order and ties, so it is left out. For a
// sharing pod, the card left with least free capacity (gpuSelMethod best).
#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class BestFitPolicy final : public Policy {
 public:
  explicit BestFitPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "bestfit"; }
  CardChooser* card_chooser() override { return &card_; }
  PolicyTraits traits() const override { return PolicyTraits::node_state_only(); }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    usage_after(node, allocation, after_);
    double left = 0;
    left += (cpu_left(node) - static_cast<double>(pod.host.cpu_milli)) / kMaxSpecCpuMilli * 0.5;
    left +=
        static_cast<double>(node_free_milli(node) - requested_milli(node, after_)) / kMaxSpecGpuMilli * 0.5;
    const double score = go_int64((1.0 - left) * 100);
    return {score, score};
  }

 private:
  UsageAfter after_;  // scratch: the candidate charged
  BestFitCard card_;
};

}  // namespace

void register_bestfit() {
  register_policy("bestfit", [](const PolicyArgs& a) { return std::make_unique<BestFitPolicy>(a); });
}

}  // namespace gpuslice::core::research
