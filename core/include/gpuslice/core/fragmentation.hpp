// GPU fragmentation as the FGD study defines it (Weng et al., ATC'23),
// generalised to HAMi's two-dimensional cards.
//
// A node's fragment, seen by one typical pod, is the free GPU compute that
// pod could not use: all of the node's free compute when the pod cannot fit
// the node at all (too few cards with room, or not enough host CPU/memory,
// or no card of an allowed type), otherwise the free compute of the cards
// that lack room for it. The node's fragmentation is that amount averaged
// over the typical pods by frequency. Free compute of a card is in milli-GPU
// (1000 = a whole card): 1000 x free cores / cores; a card's room for a pod
// is HAMi's per-card check (slots, memory, cores, exclusivity), so memory and
// slots can strand compute too.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct TypicalPod;  // policy.hpp

// The request shapes (device request, host CPU and memory, type limits)
// that cover `coverage` of the GPU pods, most frequent first, weights
// renormalised to sum to 1 (the study keeps 95 %). CPU-only pods are left
// out: every node looks equally fragmented to them.
std::vector<TypicalPod> typical_pods(std::span<const PodRequest> pods, double coverage = 0.95);
// The same over requests held elsewhere (a simulator's workload), without copying them.
std::vector<TypicalPod> typical_pods(size_t count, const std::function<const PodRequest&(size_t)>& pod_at,
                                     double coverage = 0.95);

// Free compute of one card in milli-GPU.
int64_t card_free_milli(const Device& device, const DeviceUsage& used);

class FragmentationModel {
 public:
  explicit FragmentationModel(std::vector<TypicalPod> typical);
  bool empty() const { return typical_.empty(); }
  // Fragment of a node in milli-GPU, at its current usage.
  double node_fragment(const NodeView& node);
  // The same for a hypothetical usage of that node (e.g. after a placement).
  double node_fragment(const NodeView& node, std::span<const DeviceUsage> usage,
                       const HostResources& host_used);

 private:
  // Per node shape and typical pod: which cards may ever serve it (type,
  // vendor, health), computed once; fit by usage is checked per call.
  const std::vector<uint8_t>& admitted(const NodeView& node);

  double compute(const NodeView& node, std::span<const DeviceUsage> usage, const HostResources& host_used);

  std::vector<TypicalPod> typical_;
  // Fragment by node state (shape, host use, card use), keyed by two
  // independent 64-bit hashes of it: FGD asks about the same states pod
  // after pod. Cleared when it grows past kMemoLimit entries.
  static constexpr size_t kMemoLimit = 1 << 20;
  std::unordered_map<uint64_t, std::pair<uint64_t, double>> memo_;
  std::vector<std::vector<uint8_t>> admitted_by_shape_;  // [shape][typical * cards + card]
};

}  // namespace gpuslice::core
