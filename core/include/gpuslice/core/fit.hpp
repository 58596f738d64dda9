// Does a pod fit one node, and on which cards? HAMi's Fit, step for step:
// cards sorted by the GPU policy and walked from the end, the first failing
// check giving each card's reason, init containers placed first on copies
// (keeping their peak), then app containers, each seeing the usage the
// previous ones added.
#pragma once

#include <string>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/reasons.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct FitResult {
  bool fits = false;
  std::string reason;        // HAMi node reason when it does not fit
  PodAllocation allocation;  // when it fits
};

// Reusable scratch so the hot path does not allocate per node.
struct FitScratch {
  std::vector<DeviceUsage> usage, peak;
  std::vector<int> order;
  std::vector<DeviceGrant> picks;
};

FitResult fit_pod(const NodeView& node, const PodRequest& pod, const GpuPolicy& gpu_policy,
                  FitScratch& scratch);

// Cards one container could take on a node at its usage, each alone: the
// candidates a sharing pod (one card, part of it) may choose between.
std::vector<int> fitting_cards(const NodeView& node, std::span<const DeviceUsage> usage,
                               const PodRequest& pod, const ContainerRequest& request);

}  // namespace gpuslice::core
