// Topology-aware card choice (HAMi calculate_score.go) over a Boost.Graph of
// the node's cards, edges weighted by the published pair scores.
#pragma once

#include <span>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

// Link kinds and their pair-score weights, as HAMi's device plugin computes them.
enum class LinkKind { CrossCPU, SameCPU, HostBridge, MultiSwitch, SingleSwitch, SameBoard };
int link_weight(LinkKind kind);
inline int nvlink_weight(int links) { return 100 * links; }

// From `eligible` (card positions in walk order) choose `count` cards:
// count == 1: the card with the lowest total score to the other eligible
// cards; count > 1: the subset with the highest pairwise sum, the first
// strict maximum in combination order.
std::vector<int> choose_by_topology(const Node& node, std::span<const int> eligible, int count);

}  // namespace gpuslice::core
