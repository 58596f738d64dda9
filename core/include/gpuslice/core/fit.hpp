// Does a pod fit one node, and on which cards? HAMi's Fit, step for step:
// cards sorted by the GPU policy and walked from the end, the first failing
// check giving each card's reason, init containers placed first on copies
// (keeping their peak), then app containers, each seeing the usage the
// previous ones added.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/mig.hpp"
#include "gpuslice/core/reasons.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct FitResult {
  bool fits = false;
  Refusal refusal;           // why not, when it does not fit
  PodAllocation allocation;  // when it fits
};

// Reusable scratch so the hot path does not allocate per node.
struct FitScratch {
  std::vector<DeviceUsage> usage, peak;
  std::vector<int> order;
  std::vector<DeviceGrant> picks;
};

struct QuotaHeadroom;

// `quota`: the pod's namespace's headroom when a ResourceQuota limits it;
// each card is then also checked against it (HAMi's ResourceQuotaNotFit,
// between the card's exclusivity and memory checks).
FitResult fit_pod(const NodeView& node, const PodRequest& pod, const GpuPolicy& gpu_policy,
                  FitScratch& scratch, const QuotaHeadroom* quota = nullptr);

// fit_pod(node, pod, gpu_policy, scratch).fits, without the reasons or the
// cards: what preemption asks for each set of victims. Where the cards'
// order cannot change the answer (at most one app container asks for cards,
// no NUMA binding, no topology policy) it counts the cards that pass HAMi's
// per-card checks instead of sorting them; elsewhere, and where a MIG-mode
// card's instances would decide, it is fit_pod.
bool pod_fits(const NodeView& node, const PodRequest& pod, const GpuPolicy& gpu_policy, FitScratch& scratch);

// Whether card `d` may ever serve this container (health, cordon, vendor,
// type and UUID selectors): the part of a card's fit that usage never changes.
bool card_admits(const Node& node, size_t d, const PodRequest& pod, const ContainerRequest& request);

// HAMi Fit's checks after the NUMA step (6 to 13) for one card, for a
// container asking `cores` (at most 100) and `memreq` MiB of it, in HAMi's
// order; the first failing one is the card's reason. Inline: FGD runs it
// millions of times.
inline std::optional<Reason> capacity_check(const Device& dev, const DeviceUsage& used, int32_t cores,
                                            int64_t memreq, bool mutex) {
  if (dev.slots <= used.slots) return Reason::CardTimeSlicingExhausted;
  if (mutex && used.slots > 0) return Reason::ExclusiveDeviceAllocateConflict;
  if (dev.memory_mib - used.memory_mib < memreq) return Reason::CardInsufficientMemory;
  if (dev.cores - used.cores < cores) return Reason::CardInsufficientCore;
  if (dev.cores == 100 && cores == 100 && used.slots > 0) return Reason::ExclusiveDeviceAllocateConflict;
  if (dev.cores != 0 && used.cores == dev.cores && cores == 0) return Reason::CardComputeUnitsExhausted;
  return std::nullopt;
}

// Whether a card at `used` has room for a container asking `cores` and
// `memreq` MiB of it (no mutex), for callers that know the MiB per card. A
// MIG-mode card also needs a profile holding `memreq` with a free
// placement, and a closed card (unreadable MIG reservations) has none.
inline bool card_has_room(const Device& dev, const DeviceUsage& used, int32_t cores, int64_t memreq) {
  if (capacity_check(dev, used, cores, memreq, false) || used.closed_by > 0) return false;
  return !dev.is_mig() || mig_has_room(dev, used, memreq);
}

// Whether the node's host has room for the pod's CPU and memory (each
// checked only where the node tracks it): HAMi's fit starts there.
struct HostShortfall {
  bool cpu = false, memory = false;
  bool any() const { return cpu || memory; }
};
inline HostShortfall host_shortfall(const NodeView& node, const PodRequest& pod) {
  const auto& cap = node.node->capacity;
  return {cap.cpu_milli > 0 && node.host_used.cpu_milli + pod.host.cpu_milli > cap.cpu_milli,
          cap.memory_mib > 0 && node.host_used.memory_mib + pod.host.memory_mib > cap.memory_mib};
}

// Whether card `d` at `used` has room for the container alone (slots,
// memory, cores, exclusivity): the part of a card's fit that usage decides.
inline bool card_has_room(const Device& device, const DeviceUsage& used, const ContainerRequest& request) {
  return card_has_room(device, used, std::min<int32_t>(request.cores, 100),
                       request.memory_on(device.memory_mib));
}

// Cards one container could take on a node at its usage, each alone: the
// candidates a sharing pod (one card, part of it) may choose between.
std::vector<int> fitting_cards(const NodeView& node, std::span<const DeviceUsage> usage,
                               const PodRequest& pod, const ContainerRequest& request);
// The same into `cards` (cleared first): no allocation once it has grown.
void fitting_cards(const NodeView& node, std::span<const DeviceUsage> usage, const PodRequest& pod,
                   const ContainerRequest& request, std::vector<int>& cards);

}  // namespace gpuslice::core
