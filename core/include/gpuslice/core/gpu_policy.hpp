// HAMi's GPU (card) policies: how the cards of one node are ordered before
// Fit walks them from the END of the order, plus the two filter policies
// (mutex, topology-aware) that change the walk itself.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

enum class SortKey : uint8_t { Binpack, Spread, Numa };

struct GpuPolicy {
  std::string text = "spread";
  bool chain = false;         // a comma list or bare "numa": keys in written order
  std::vector<SortKey> keys;  // parsed keys when chain
  bool binpack = false;       // single-value mode
  bool mutex = false;
  bool topology = false;
  static GpuPolicy parse(std::string_view text);
};

// The one check of a GPU policy string, wherever it comes from (flag,
// annotation, scenario, Python, sweep): a known name or a comma chain of
// them. HAMi itself sorts anything unknown as spread; we refuse it instead.
// Returns an empty string when valid, else why not.
std::string gpu_policy_problem(std::string_view text);
// Throws std::invalid_argument with gpu_policy_problem's text.
void check_gpu_policy(std::string_view text);

// Device score (HAMi DeviceListsScore.ComputeScore) of one card for one
// container: 10 * (ws*(r+used)/slots + wc*(c+usedcores)/cores + wm*(m+usedmem)/mem).
// HAMi only counts the request when the container's type string equals the
// card's type exactly, which never happens with real model names (documented
// defect); we count it whenever the card belongs to the request's vendor.
float device_score(const Device& device, const DeviceUsage& usage, const ContainerRequest& request,
                   const ScoringWeights& weights);

// Orders card positions [0, n) as HAMi sorts them for this container.
void order_devices(const NodeView& node, std::span<const DeviceUsage> usage, const ContainerRequest& request,
                   const ScoringWeights& weights, const GpuPolicy& policy, bool numa_bind,
                   std::vector<int>& order);

}  // namespace gpuslice::core
