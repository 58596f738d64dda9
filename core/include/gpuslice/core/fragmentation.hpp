// GPU fragmentation as the FGD study defines it (Weng et al., ATC'23),
// generalised to HAMi's two-dimensional cards.
//
// A node's fragment, seen by one typical pod, is the free GPU capacity that
// pod could not use: all of the node's free capacity when the pod cannot fit
// the node at all (too few cards with room, not enough host CPU, or no card
// of an allowed type) or asks for no GPU at all (the study's XL/XR classes),
// otherwise the free capacity of the cards that lack room for it. The node's
// fragmentation is that amount averaged over the typical pods by frequency
// (the artifact's NodeGpuShareFragAmountScore, pkg/utils/frag.go). Host
// memory plays no part, as in the study.
//
// Free capacity of a card is in milli-GPU (1000 = a whole card) of its
// binding dimension: 1000 x min(free cores / cores, free MiB / MiB), and 0
// when no slot is left. A card's room for a pod is HAMi's per-card check
// (slots, memory, cores, exclusivity), so memory and slots strand capacity
// as cores do. For openb replays, where a share asks the same fraction of
// cores and memory, this is the study's one scalar exactly.
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

// The request shapes that cover `coverage` of the pods, most frequent first,
// weights renormalised to sum to 1 (the study keeps 95 %; GetTypicalPods in
// the artifact's pkg/utils/frag.go). A shape is (host CPU, per-card device
// request, card count, type limits): host memory is not part of it. CPU-only
// pods are shapes too (the artifact's default isInvolvedCpuPods: true).
// Among equally frequent shapes the larger (CPU, then card share, count,
// types) comes first, as the artifact's reverse sort puts it.
std::vector<TypicalPod> typical_pods(std::span<const PodRequest> pods, double coverage = 0.95);
// The same over requests held elsewhere (a simulator's workload), without copying them.
std::vector<TypicalPod> typical_pods(size_t count, const std::function<const PodRequest&(size_t)>& pod_at,
                                     double coverage = 0.95);

// Free capacity of one card in milli-GPU of its binding dimension.
int64_t card_free_milli(const Device& device, const DeviceUsage& used);

class FragmentationModel {
 public:
  explicit FragmentationModel(std::vector<TypicalPod> typical);
  bool empty() const { return typical_.empty() && cpu_only_weight_ == 0; }
  // Fragment of a node in milli-GPU, at its current usage.
  double node_fragment(const NodeView& node);
  // The same for a hypothetical usage of that node (e.g. after a placement).
  double node_fragment(const NodeView& node, std::span<const DeviceUsage> usage,
                       const HostResources& host_used);

 private:
  // Per node shape, computed once: for each typical pod which cards may
  // ever serve it (type, vendor, health), a bit per card; for each demand
  // the MiB it takes on each card. Room by usage is checked per call.
  struct ShapeFacts {
    std::vector<uint64_t> admitted;  // [typical]
    std::vector<int64_t> memreq;     // [demand * cards + card]
    uint64_t mig_cards = 0;          // MIG-mode cards: instances, not one per card
  };
  const ShapeFacts& facts(const NodeView& node);

  double compute(const NodeView& node, std::span<const DeviceUsage> usage, const HostResources& host_used);

  std::vector<TypicalPod> typical_;  // those asking for a GPU
  // Typical pods differ mostly in CPU and card count; what one card must
  // hold for them takes few values. Room on a card is checked once per
  // distinct demand, not once per typical pod.
  std::vector<ContainerRequest> demands_;  // distinct per-card demands
  std::vector<uint32_t> demand_of_;        // typical pod -> its demand
  std::vector<int32_t> count_of_;          // typical pod -> cards it asks for
  double cpu_only_weight_ = 0;             // summed weight of the CPU-only ones
  // Fragment by node state (shape, host use, card use), keyed by two
  // independent 64-bit hashes of it: FGD asks about the same states pod
  // after pod. A direct-mapped table (a newer state evicts an older one in
  // its slot): no allocation or rehash per entry, unlike a growing map.
  struct MemoEntry {
    uint64_t a = 0, b = 0;
    double fragment = 0;
  };
  static constexpr size_t kMemoSlots = size_t{1} << 16;
  std::vector<MemoEntry> memo_;
  std::vector<ShapeFacts> facts_by_shape_;
};

}  // namespace gpuslice::core
