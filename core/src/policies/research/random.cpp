// Random, as the study runs it: a feasible node uniformly at random
// (pkg/simulator/plugin/random_score.go: PreScore draws one of the nodes
// that passed the filter), then, for a sharing pod, a fitting card
// uniformly (gpuSelMethod random). Each pod draws a fresh salt from the
// seeded stream; a node's ticket and a card's ticket are hashes of it, so
// the full scan and the scheduler's draw-and-fit path choose alike.
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

uint64_t splitmix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

class RandomPolicy final : public Policy, public CardChooser, public NodeLottery {
 public:
  explicit RandomPolicy(const PolicyArgs& args) : state_(args.seed * 0x9e3779b97f4a7c15ULL + 1) {
    default_gpu_policy_ = args.gpu_policy;
  }
  std::string_view name() const override { return "random"; }
  CardChooser* card_chooser() override { return this; }
  NodeLottery* lottery() override { return this; }
  void begin_pod(const Cluster&, const PodRequest&) override {
    salt_ = splitmix(state_ += 0x9e3779b97f4a7c15ULL);
  }
  double node_draw(size_t node) const override { return ticket(node); }
  size_t best_draw(std::span<const uint32_t> nodes) const override {
    // Tickets compare as their 53-bit integers: no conversion per node.
    return highest_ticket(nodes, [this](uint32_t node) { return ticket_bits(node); });
  }
  NodeScore score(const NodeView& node, const PodRequest&, const PodAllocation&) override {
    const double ticket = node_draw(node.id);
    return {ticket, ticket};
  }
  // A card uniformly: each card's own ticket for this pod.
  double card_rank(const NodeView& node, const PodRequest&, const PodAllocation& allocation) override {
    double card = 0;
    for (const auto& c : allocation.containers)
      for (const auto& g : c)
        card = unit(
            splitmix(salt_ + 0x632be59bd9b4e019ULL * (node.id * 64 + static_cast<uint64_t>(g.device) + 1)));
    return card;
  }

 private:
  uint64_t ticket_bits(uint64_t node) const { return splitmix(salt_ ^ (node * 0x9e3779b97f4a7c15ULL)) >> 11; }
  double ticket(uint64_t node) const { return static_cast<double>(ticket_bits(node)) * 0x1.0p-53; }

  uint64_t state_;
  uint64_t salt_ = 0;
};

}  // namespace

void register_random() {
  register_policy("random", [](const PolicyArgs& a) { return std::make_unique<RandomPolicy>(a); });
}

}  // namespace gpuslice::core::research
