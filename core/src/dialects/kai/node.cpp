// KAI's view of a pod and of a node: the GPU requirement
// (pod_info.go updatePodAdditionalFields), the memory of every GPU
// (node_info.go getNodeGpuMemory) and the node's idle GPUs and GPU groups
// (gpu_sharing_node_info.go).
#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuslice/core/dialects/kai/policy.hpp"

namespace gpuslice::core {

KaiRequirement kai_requirement(const PodRequest& pod) {
  KaiRequirement r;
  const ContainerRequest* c = pod.first_device_container();
  if (!c) return r;
  r.count = c->count;
  if (c->memory_fraction > 0) {
    r.kind = KaiRequirement::Kind::Fraction;
    r.fraction = c->memory_fraction;
  } else if (c->memory_mib > 0) {
    r.kind = KaiRequirement::Kind::Memory;
    r.memory_mib = c->memory_mib;
  } else {
    r.kind = KaiRequirement::Kind::Regular;
  }
  return r;
}

int64_t kai_gpu_memory(const Node& node) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const Device& d : node.devices)
    if (d.healthy) least = std::min(least, d.memory_mib);
  if (least == std::numeric_limits<int64_t>::max()) return 0;
  return least - least % 100;  // "so there will not be 2 jobs that get same bytes"
}

int64_t kai_memory_per_device(const KaiRequirement& r, int64_t gpu_memory) {
  switch (r.kind) {
    case KaiRequirement::Kind::Memory:
      return r.memory_mib;
    case KaiRequirement::Kind::Fraction:
      return static_cast<int64_t>(r.fraction * static_cast<double>(gpu_memory));
    case KaiRequirement::Kind::Regular:
      return gpu_memory;  // portion 1
    case KaiRequirement::Kind::CpuOnly:
      break;
  }
  return 0;
}

// A card some pod holds is held whole when its holders take all its
// compute (KAI's whole-GPU grants do; so do HAMi's exclusive ones), else it
// is a shared GPU group.
static bool held_whole(const Device& d, const DeviceUsage& u) {
  return d.cores > 0 ? u.cores >= d.cores : u.memory_mib >= d.memory_mib;
}

KaiNode kai_node(const NodeView& node) {
  KaiNode k;
  kai_node(node, k);
  return k;
}

void kai_node(const NodeView& node, KaiNode& k) {
  k.gpus = k.idle = 0;
  k.groups.clear();
  k.gpu_memory = kai_gpu_memory(*node.node);
  for (size_t i = 0; i < node.device_count(); ++i) {
    const Device& d = node.device(i);
    if (!d.healthy) continue;  // the device plugin leaves it out of nvidia.com/gpu
    ++k.gpus;
    const DeviceUsage& u = node.usage[i];
    if (u.slots == 0)
      ++k.idle;
    else if (!held_whole(d, u))
      k.groups.push_back({static_cast<int>(i), u.memory_mib});
  }
}

}  // namespace gpuslice::core
