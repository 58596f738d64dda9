// What the FGD family of policies reads off a node and a candidate
// placement. Private to the research policies.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core::research {

// The study's normalisers for node-level scores (its MaxSpecCpu and
// MaxSpecGpu): a 128-core, 8-GPU machine.
inline constexpr double kMaxSpecCpuMilli = 128000;
inline constexpr double kMaxSpecGpuMilli = 8000;

// Usage of a node's cards once a candidate allocation is charged. Nodes have
// few cards; a fixed buffer keeps scoring free of allocations.
struct UsageAfter {
  static constexpr size_t kMaxCards = 64;
  std::array<DeviceUsage, kMaxCards> cards{};
  size_t count = 0;
  std::span<const DeviceUsage> span() const { return {cards.data(), count}; }
};

inline bool usage_after(const NodeView& node, const PodAllocation& allocation, UsageAfter& out) {
  if (node.device_count() > UsageAfter::kMaxCards) return false;
  out.count = node.device_count();
  std::copy(node.usage.begin(), node.usage.end(), out.cards.begin());
  for (const auto& charge : effective_charges(allocation)) {
    auto& u = out.cards[static_cast<size_t>(charge.device)];
    u.slots += charge.usage.slots;
    u.memory_mib += charge.usage.memory_mib;
    u.cores += charge.usage.cores;
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

// Free capacity (milli) the allocation takes from the cards it touches, in
// each card's binding dimension: the study's request in milli-GPU for openb
// pods, and memory-only HAMi requests count by the memory they take.
inline int64_t requested_milli(const NodeView& node, const PodAllocation& allocation) {
  UsageAfter after;
  if (!usage_after(node, allocation, after)) return 0;
  int64_t milli = 0;
  std::array<bool, UsageAfter::kMaxCards> seen{};
  for (const auto& charge : effective_charges(allocation)) {
    const size_t d = static_cast<size_t>(charge.device);
    if (seen[d]) continue;
    seen[d] = true;
    milli += card_free_milli(node.device(d), node.usage[d]) - card_free_milli(node.device(d), after.cards[d]);
  }
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
inline double leftover_on_chosen_cards(const NodeView& node, const PodAllocation& allocation) {
  UsageAfter after;
  if (!usage_after(node, allocation, after)) return 0;
  double left = 0;
  for (const auto& charge : effective_charges(allocation))
    left += static_cast<double>(card_free_milli(node.device(static_cast<size_t>(charge.device)),
                                                after.cards[static_cast<size_t>(charge.device)]));
  return left;
}

// The artifact's node scores are integers (int64 of a float64, truncated
// toward zero), so nearby placements tie and go to the node listed first.
inline double go_int64(double v) { return static_cast<double>(static_cast<int64_t>(v)); }

}  // namespace gpuslice::core::research
