// GpuPacking, as the study's artifact scores it (pkg/simulator/plugin/
// gpu_packing_score.go): prefer an already shared card, then idle cards on
// a node with some card in use, then a node whose cards are all idle.
// Integer bands on a 100-point scale:
//   all cards idle:          max(33 - idle cards, idle cards)
//   must take idle cards:    max(50 - idle cards taken, 33)
//   shared cards only:       max(100 - (sum of free % of the cards taken)/10, 50)
// The cards "taken" are the first that fit, least free first. CPU-only pods
// score 0 on every node. The card itself is chosen best-fit.
#include <algorithm>

#include "common.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class GpuPackingPolicy final : public Policy {
 public:
  explicit GpuPackingPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "gpupacking"; }
  CardChooser* card_chooser() override { return &card_; }
  PolicyTraits traits() const override { return PolicyTraits::node_state_only(); }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation&) override {
    const ContainerRequest* want = pod.first_device_container();
    if (!want) return {0, 0};
    const size_t cards = node.device_count();
    if (cards > UsageAfter::kMaxCards) return {0, 0};
    std::array<int64_t, UsageAfter::kMaxCards> free;  // [0, cards) written below
    int64_t idle = 0;
    for (size_t d = 0; d < cards; ++d)
      if ((free[d] = card_free_milli(node.device(d), node.usage[d])) == 1000) ++idle;
    if (idle == static_cast<int64_t>(cards)) {
      const double s = static_cast<double>(std::max<int64_t>(100 / 3 - idle, idle));
      return {s, s};
    }
    std::array<size_t, UsageAfter::kMaxCards> order;
    for (size_t d = 0; d < cards; ++d) order[d] = d;
    std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(cards),
                     [&](size_t a, size_t b) { return free[a] < free[b]; });
    int remaining = want->count;
    int64_t idle_taken = 0, free_pct_taken = 0;
    for (size_t k = 0; k < cards && remaining > 0; ++k) {
      const size_t d = order[k];
      if (!card_admits(*node.node, d, pod, *want) || !card_has_room(node.device(d), node.usage[d], *want))
        continue;
      --remaining;
      if (free[d] == 1000) ++idle_taken;
      free_pct_taken += free[d] * 100 / 1000;
    }
    double s;
    if (idle_taken > 0)
      s = static_cast<double>(std::max<int64_t>(100 / 2 - idle_taken, 100 / 3));
    else
      s = static_cast<double>(std::max<int64_t>(100 - free_pct_taken / 10, 100 / 2));
    return {s, s};
  }

 private:
  BestFitCard card_;
};

}  // namespace

void register_gpupacking() {
  register_policy("gpupacking", [](const PolicyArgs& a) { return std::make_unique<GpuPackingPolicy>(a); });
}

}  // namespace gpuslice::core::research
