// A running HAMi pod's MIG reservations read back (HAMi v2.10.0
// pkg/scheduler/scheduler.go getNodesUsage): which instance each grant
// holds, and which cards the pod closes when its reservations cannot be
// read. Internal to HAMi's placed reading (placed.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

// Pairs hami.io/vgpu-mig-allocations with `allocation`'s grants on `node`
// and fails closed as HAMi does: a MIG-mode card the pod holds with no
// reservation naming it, a card not in MIG mode that a reservation names,
// and (a reservation naming a card the node lacks) every MIG-mode card of
// the node go to allocation.closes_cards. An annotation HAMi cannot decode
// counts as none (HAMi logs and goes on); its error is returned ("" when
// it decoded).
std::string read_mig_reservations(const Node& node, std::string_view annotation, PodAllocation& allocation);

}  // namespace gpuslice::core
