// What the FGD family of policies reads off a node and a candidate
// placement. Private to the research policies.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/mig.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core::research {

// The study's normalisers for node-level scores (its MaxSpecCpu and
// MaxSpecGpu): a 128-core, 8-GPU machine.
inline constexpr double kMaxSpecCpuMilli = 128000;
inline constexpr double kMaxSpecGpuMilli = 8000;

// Usage of a node's cards once a candidate allocation is charged, and which
// cards it touches. Nodes have few cards; a fixed buffer keeps scoring free
// of allocations (policies score millions of candidates per run).
struct UsageAfter {
  static constexpr size_t kMaxCards = 64;
  std::array<DeviceUsage, kMaxCards> cards{};
  size_t count = 0;
  uint64_t charged = 0;  // bit d: the allocation charges card d
  std::span<const DeviceUsage> span() const { return {cards.data(), count}; }
  template <typename F>
  void for_each_charged(F f) const {
    for (uint64_t bits = charged; bits; bits &= bits - 1) f(static_cast<size_t>(std::countr_zero(bits)));
  }
};

// False (and nothing charged) for a node with more cards than the buffer.
inline bool usage_after(const NodeView& node, const PodAllocation& allocation, UsageAfter& out) {
  out.count = 0;
  out.charged = 0;
  if (node.device_count() > UsageAfter::kMaxCards) return false;
  out.count = node.device_count();
  std::copy(node.usage.begin(), node.usage.end(), out.cards.begin());
  const bool init_grants = std::any_of(
      allocation.containers.begin(),
      allocation.containers.begin() +
          static_cast<std::ptrdiff_t>(std::min(allocation.init_count, allocation.containers.size())),
      [](const auto& grants) { return !grants.empty(); });
  if (!init_grants) {
    // App containers only (every openb pod): each grant adds to its card.
    for (const auto& grants : allocation.containers)
      for (const auto& g : grants) {
        const auto d = static_cast<size_t>(g.device);
        out.cards[d].slots += 1;
        out.cards[d].memory_mib += g.memory_mib;
        out.cards[d].cores += g.cores;
        // A MIG instance holds its slices too: the look-ahead's MIG room
        // (mig_has_room) must see them taken.
        if (g.is_mig()) out.cards[d].mig_slices += mig_slice_counts(g.mig_placement);
        out.charged |= uint64_t{1} << d;
      }
    return true;
  }
  for (const auto& charge : effective_charges(allocation)) {  // init containers' peak
    const auto d = static_cast<size_t>(charge.device);
    auto& u = out.cards[d];
    u.slots += charge.usage.slots;
    u.memory_mib += charge.usage.memory_mib;
    u.cores += charge.usage.cores;
    u.mig_slices += charge.usage.mig_slices;
    out.charged |= uint64_t{1} << d;
  }
  return true;
}

inline int64_t node_free_milli(const NodeView& node) {
  int64_t free = 0;
  for (size_t d = 0; d < node.device_count(); ++d) free += card_free_milli(node.device(d), node.usage[d]);
  return free;
}

inline int64_t node_capacity_milli(const NodeView& node) {
  int64_t total = 0;
  for (size_t d = 0; d < node.device_count(); ++d) total += card_free_milli(node.device(d), DeviceUsage{});
  return total;
}

// Free capacity (milli) the allocation (charged into `after`) takes from the cards it touches, in
// each card's binding dimension: the study's request in milli-GPU for openb
// pods, and memory-only HAMi requests count by the memory they take.
inline int64_t requested_milli(const NodeView& node, const UsageAfter& after) {
  int64_t milli = 0;
  after.for_each_charged([&](size_t d) {
    milli += card_free_milli(node.device(d), node.usage[d]) - card_free_milli(node.device(d), after.cards[d]);
  });
  return milli;
}

// Host CPU left before the pod (a node without a CPU limit: the study's
// largest node).
inline double cpu_left(const NodeView& node) {
  const auto cap = node.node->capacity.cpu_milli;
  return cap > 0 ? static_cast<double>(cap - node.host_used.cpu_milli) : kMaxSpecCpuMilli;
}

inline bool card_idle(const DeviceUsage& u) { return u.slots == 0 && u.cores == 0 && u.memory_mib == 0; }

// Free capacity left on the allocation's cards: the best-fit card choice
// (least left over; the artifact's gpuSelMethod "best") for sharing pods.
inline double leftover_on_chosen_cards(const NodeView& node, const UsageAfter& after) {
  double left = 0;
  after.for_each_charged(
      [&](size_t d) { left += static_cast<double>(card_free_milli(node.device(d), after.cards[d])); });
  return left;
}

// The artifact's best-fit card choice for a share (gpuSelMethod "best"): the
// card left with the least free capacity.
class BestFitCard final : public CardChooser {
 public:
  double card_rank(const NodeView& node, const PodRequest&, const PodAllocation& allocation) override {
    usage_after(node, allocation, after_);
    return -leftover_on_chosen_cards(node, after_);
  }

 private:
  UsageAfter after_;  // scratch: the candidate charged
};

// The first card with the node's top score (the artifact's FGD: it keeps
// the first card reaching the best rounded score).
class FirstTopCard final : public CardChooser {
 public:
  double card_rank(const NodeView&, const PodRequest&, const PodAllocation&) override { return 0; }
};

// The artifact's node scores are integers (int64 of a float64, truncated
// toward zero), so nearby placements tie and go to the node listed first.
inline double go_int64(double v) { return static_cast<double>(static_cast<int64_t>(v)); }

}  // namespace gpuslice::core::research
