// BestFit: the node left with least, as a weighted sum over CPU and GPU of
// (free - request) / the study's maximum node spec; lower is better. For a
// sharing pod, the card left with least free compute.
#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class BestFitPolicy final : public Policy {
 public:
  explicit BestFitPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "bestfit"; }
  bool chooses_share_card() const override { return true; }
  bool score_reads_only_node_state() const override { return true; }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    const double gpu_left = static_cast<double>(node_free_milli(node) - requested_milli(node, allocation));
    const double left =
        0.5 * cpu_left_after(node, pod) / kMaxSpecCpuMilli + 0.5 * gpu_left / kMaxSpecGpuMilli;
    const double shown = 100 * (1 - left);
    return {shown - leftover_on_chosen_cards(node, allocation) * 1e-9, shown};
  }
};

}  // namespace

void register_bestfit() {
  register_policy("bestfit", [](const PolicyArgs& a) { return std::make_unique<BestFitPolicy>(a); });
}

}  // namespace gpuslice::core::research
