// DeviceShare's view of a pod and of a node's cards: the per-GPU
// requirement (devicehandler_gpu.go calcDesiredRequestsAndCountForGPU, here
// read from a request already in Koordinator's terms) and each card's total
// and free resources (device_cache.go buildDeviceResources, resetDeviceFree).
#include <algorithm>

#include "gpuslice/core/dialects/koordinator/policy.hpp"

namespace gpuslice::core {

std::optional<KoordinatorRequirement> koordinator_requirement(const PodRequest& pod) {
  const ContainerRequest* c = pod.first_device_container();
  if (!c) return std::nullopt;
  KoordinatorRequirement r;
  r.count = c->count;
  if (c->cores > 0) r.core = c->cores;
  if (c->memory_percent != kMemoryPercentUnset) {
    r.ratio = c->memory_percent;
    r.shared = c->memory_percent < 100;
  } else if (c->memory_bytes > 0) {
    r.bytes = c->memory_bytes;
    r.shared = true;
  }
  return r;
}

bool KoordinatorCard::satisfies(const KoordinatorRequirement& r) const {
  // quotav1.LessThanOrEqual(request, free): only what the request names.
  return (!r.core || *r.core <= free_core) && (!r.ratio || *r.ratio <= free_ratio) &&
         (!r.bytes || *r.bytes <= free_bytes);
}

std::vector<KoordinatorCard> koordinator_cards(const NodeView& node) {
  std::vector<KoordinatorCard> cards;
  cards.reserve(node.device_count());
  for (size_t i = 0; i < node.device_count(); ++i) {
    const Device& d = node.device(i);
    const DeviceUsage& u = node.usage[i];
    KoordinatorCard c;
    c.position = static_cast<int>(i);
    c.minor = d.index;
    if (d.healthy) {  // an unhealthy device's resources are empty
      c.total_core = d.cores;
      c.total_bytes = d.memory_mib * DeviceUsage::kMiB;
      c.total_ratio = 100;
    }
    c.free_core = std::max<int64_t>(0, c.total_core - u.cores);
    c.free_bytes = std::max<int64_t>(0, c.total_bytes - u.memory_bytes());
    c.free_ratio = std::max<int64_t>(0, c.total_ratio - u.memory_ratio);
    c.used = u.slots > 0;
    cards.push_back(c);
  }
  return cards;
}

}  // namespace gpuslice::core
