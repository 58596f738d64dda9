// GpuPacking: prefer an already shared card, then idle cards on a busy
// node, then an idle node (the study's three bands, 100-point scale):
//   shared cards:     100 - (free % of the chosen cards)/10, at least 50
//   idle cards, busy: 50 - idle cards taken, at least 33
//   idle node:        33 - its cards, at least its cards
#include <algorithm>

#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class GpuPackingPolicy final : public Policy {
 public:
  explicit GpuPackingPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "gpupacking"; }
  bool chooses_share_card() const override { return true; }
  bool score_reads_only_node_state() const override { return true; }
  NodeScore score(const NodeView& node, const PodRequest&, const PodAllocation& allocation) override {
    const int64_t cards = static_cast<int64_t>(node.device_count());
    const bool node_idle = std::all_of(node.usage.begin(), node.usage.end(), card_idle);
    double band;
    if (node_idle) {
      band = static_cast<double>(std::max<int64_t>(100 / 3 - cards, cards));
    } else {
      int64_t idle_taken = 0, free_pct_of_shared = 0;
      for (const auto& charge : effective_charges(allocation)) {
        const size_t d = static_cast<size_t>(charge.device);
        if (card_idle(node.usage[d]))
          ++idle_taken;
        else
          free_pct_of_shared += card_free_milli(node.device(d), node.usage[d]) * 100 / 1000;
      }
      band = idle_taken > 0 ? static_cast<double>(std::max<int64_t>(50 - idle_taken, 100 / 3))
                            : static_cast<double>(std::max<int64_t>(100 - free_pct_of_shared / 10, 50));
    }
    // Within a band, the card left with least free compute (best fit).
    const double rank = band - leftover_on_chosen_cards(node, allocation) * 1e-6;
    return {rank, band};
  }
};

}  // namespace

void register_gpupacking() {
  register_policy("gpupacking", [](const PolicyArgs& a) { return std::make_unique<GpuPackingPolicy>(a); });
}

}  // namespace gpuslice::core::research
