// DotProd (Tetris): the node whose free resources align least with the
// pod's demand, as the study's artifact scores it: vectors normalised by the
// node's capacity, the mean of the products, smaller is better. For a
// sharing pod the GPU dimension is the chosen card; otherwise the node's.
#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class DotProdPolicy final : public Policy {
 public:
  explicit DotProdPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "dotprod"; }
  bool chooses_share_card() const override { return true; }
  bool score_reads_only_node_state() const override { return true; }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    double dot = 0;
    int dims = 0;
    auto add = [&](double free, double want, double capacity) {
      if (capacity <= 0) return;
      dot += (free / capacity) * (want / capacity);
      ++dims;
    };
    const auto& cap = node.node->capacity;
    add(static_cast<double>(cap.cpu_milli - node.host_used.cpu_milli),
        static_cast<double>(pod.host.cpu_milli), static_cast<double>(cap.cpu_milli));
    add(static_cast<double>(cap.memory_mib - node.host_used.memory_mib),
        static_cast<double>(pod.host.memory_mib), static_cast<double>(cap.memory_mib));
    const auto charges = effective_charges(allocation);
    if (charges.size() == 1) {
      const size_t d = static_cast<size_t>(charges.front().device);
      add(static_cast<double>(card_free_milli(node.device(d), node.usage[d])),
          static_cast<double>(requested_milli(node, allocation)), 1000);
    } else {
      add(static_cast<double>(node_free_milli(node)), static_cast<double>(requested_milli(node, allocation)),
          static_cast<double>(node_capacity_milli(node)));
    }
    const double mean = dims > 0 ? dot / dims : 0;
    return {-mean, 1 - mean};
  }
};

}  // namespace

void register_dotprod() {
  register_policy("dotprod", [](const PolicyArgs& a) { return std::make_unique<DotProdPolicy>(a); });
}

}  // namespace gpuslice::core::research
