// KAI's fit (node_info.go isTaskAllocatableOnNonAllocatedResources), its
// GPU choice for a shared pod (gpu_sharing/gpuSharing.go with
// framework/session.go FittingGPUs and the gpupack / gpuspread GPU order)
// and its node order (nodeplacement, gpusharingorder, nodeavailability,
// resourcetype; equal scores by node name).
#include "gpuslice/core/dialects/kai/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuslice::core {

namespace {

// scores.go
constexpr double kMaxHighDensity = 9;
constexpr double kResourceType = 10;
constexpr double kAvailability = 1000;
constexpr double kGpuSharing = 10000;

// getExtendedResourceGpus: portion x count in hundredths.
double extended_gpus(double portion, int count) {
  // A node that reports no GPU memory makes a memory request an infinite
  // portion (portion_of): no count of GPUs holds it.
  if (!std::isfinite(portion)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(static_cast<int64_t>(std::round(portion * 100)) * count) / 100;
}

// getGpuMemoryFractionalOnNode: a memory request as a portion, rounded up
// to hundredths.
double portion_of(int64_t mib, int64_t gpu_memory) {
  if (gpu_memory <= 0) return std::numeric_limits<double>::infinity();
  return std::ceil(static_cast<double>(mib) / static_cast<double>(gpu_memory) * 100) / 100;
}

// isValidGpuPortion: at most one GPU, or a whole number of them.
bool valid_portion(const KaiRequirement& r, int64_t gpu_memory) {
  if (r.kind == KaiRequirement::Kind::Memory) {
    const double p = portion_of(r.memory_mib, gpu_memory);
    if (!std::isfinite(p)) return false;
    return p <= 1 || p == static_cast<double>(static_cast<int64_t>(p));
  }
  return r.kind != KaiRequirement::Kind::Fraction || r.fraction <= 1;
}

// The GPUs the fit error says the pod asked (NewFitErrorInsufficientResource).
double requested_gpus(const KaiRequirement& r, int64_t gpu_memory) {
  switch (r.kind) {
    case KaiRequirement::Kind::Regular:
      return r.count;
    case KaiRequirement::Kind::Fraction:
      return extended_gpus(r.fraction, r.count);
    case KaiRequirement::Kind::Memory:
      return extended_gpus(portion_of(r.memory_mib, gpu_memory), r.count);
    case KaiRequirement::Kind::CpuOnly:
      break;
  }
  return 0;
}

// IsTaskFitOnGpuGroup (nothing is releasing in the model).
bool fits_group(const KaiNode::Group& g, int64_t gpu_memory, int64_t memory) {
  return g.used_mib != 0 && gpu_memory - g.used_mib - memory >= 0;
}

// What nodeplacement weighs on a node: its CPU for a CPU-only pod, else
// its whole GPUs (`k`, the node's KAI view), free and overall.
struct Room {
  double free = 0, overall = 0;
};
Room placement_room(const NodeView& node, const KaiNode& k, bool cpu_only) {
  if (!cpu_only) return {static_cast<double>(k.idle), static_cast<double>(k.gpus)};
  const double cap = static_cast<double>(node.node->capacity.cpu_milli);
  return {cap - static_cast<double>(node.host_used.cpu_milli), cap};
}

}  // namespace

void KaiPolicy::begin_pod(const Cluster& cluster, const PodRequest& pod) {
  if (spread_) return;  // only binpack scores against the fleet's range
  const bool cpu_only = kai_requirement(pod).kind == KaiRequirement::Kind::CpuOnly;
  min_free_ = std::numeric_limits<double>::max();
  max_free_ = 0;
  for (size_t id = 0; id < cluster.size(); ++id) {
    const NodeView view = cluster.view(id);
    if (!cpu_only) kai_node(view, node_);
    const Room room = placement_room(view, node_, cpu_only);
    if (room.overall == 0) continue;
    min_free_ = std::min(min_free_, room.free);
    max_free_ = std::max(max_free_, room.free);
  }
}

bool KaiPolicy::takes(const NodeView& node, const PodRequest& pod, const KaiRequirement& r,
                      const KaiNode& k) {
  fitting_.clear();
  if (host_shortfall(node, pod).any()) return false;
  const int64_t memory = kai_memory_per_device(r, k.gpu_memory);
  switch (r.kind) {
    case KaiRequirement::Kind::CpuOnly:
      return true;
    case KaiRequirement::Kind::Regular:
      return r.count <= k.idle;
    case KaiRequirement::Kind::Fraction:
    case KaiRequirement::Kind::Memory:
      for (const auto& g : k.groups)
        if (fits_group(g, k.gpu_memory, memory)) fitting_.push_back(&g);
      return valid_portion(r, k.gpu_memory) &&
             k.idle + std::min<int>(static_cast<int>(fitting_.size()), r.count) >= r.count;
  }
  return false;
}

bool KaiPolicy::fits(const NodeView& node, const PodRequest& pod) {
  kai_node(node, node_);
  return takes(node, pod, kai_requirement(pod), node_);
}

FitResult KaiPolicy::fit(const NodeView& node, const PodRequest& pod) {
  FitResult result;
  result.allocation.containers.assign(pod.container_count(), {});
  result.allocation.init_count = pod.init_containers.size();
  const KaiRequirement r = kai_requirement(pod);
  kai_node(node, node_);
  const KaiNode& k = node_;
  const int64_t memory = kai_memory_per_device(r, k.gpu_memory);
  const HostShortfall host = host_shortfall(node, pod);
  if (!takes(node, pod, r, k)) {
    // What FittingError would say, in its order.
    if (requested_gpus(r, k.gpu_memory) > k.idle) result.refusal.add_node_wide(Reason::KaiNotEnoughGpus);
    if (r.kind == KaiRequirement::Kind::Memory && r.memory_mib > k.gpu_memory)
      result.refusal.add_node_wide(Reason::KaiNotEnoughGpuMemory);
    if (host.cpu) result.refusal.add_node_wide(Reason::KaiNotEnoughCpu);
    if (host.memory) result.refusal.add_node_wide(Reason::KaiNotEnoughMemory);
    // KAI records no reason when only the groups lack room; say GPUs.
    if (result.refusal.empty()) result.refusal.add_node_wide(Reason::KaiNotEnoughGpus);
    return result;
  }
  result.fits = true;
  if (r.kind == KaiRequirement::Kind::CpuOnly) return result;
  auto& grants = result.allocation.containers[pod.first_device_index()];

  // Idle cards in position order: the cards a whole GPU or a new group
  // takes (KAI does not name cards; the device plugin does).
  std::vector<int> idle;
  for (size_t i = 0; i < node.device_count(); ++i)
    if (node.device(i).healthy && node.usage[i].slots == 0) idle.push_back(static_cast<int>(i));

  if (r.kind == KaiRequirement::Kind::Regular) {
    for (int n = 0; n < r.count; ++n) {
      const Device& d = node.device(static_cast<size_t>(idle[static_cast<size_t>(n)]));
      grants.push_back(DeviceGrant{idle[static_cast<size_t>(n)], d.memory_mib, d.cores, kRatioFromMemory, 0});
    }
    return result;
  }
  // FittingGPUs: the fitting groups and one entry per idle GPU, by the GPU
  // order's score, highest first. Groups of equal score come in Go map
  // order in KAI; here by card position, and before idle GPUs.
  struct Entry {
    double score;
    int position;  // -1: an idle GPU (a new group)
  };
  std::vector<Entry> entries;
  const double gm = static_cast<double>(k.gpu_memory);
  for (const auto* g : fitting_) {
    const double used = static_cast<double>(g->used_mib) / gm;
    entries.push_back({spread_ ? 1 - used : used, g->position});
  }
  for (size_t i = 0; i < idle.size(); ++i) entries.push_back({spread_ ? 1.0 : 0.0, -1});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.score > b.score; });
  size_t next_idle = 0;
  for (int n = 0; n < r.count; ++n) {
    const Entry& e = entries[static_cast<size_t>(n)];
    const int position = e.position >= 0 ? e.position : idle[next_idle++];
    grants.push_back(DeviceGrant{position, memory, 0, kRatioFromMemory, 0});
  }
  return result;
}

bool KaiPolicy::may_fit(const NodeView& node, const PodRequest& pod) {
  if (host_shortfall(node, pod).any()) return false;
  const KaiRequirement r = kai_requirement(pod);
  if (r.kind != KaiRequirement::Kind::Regular) return true;
  int idle = 0;
  for (size_t i = 0; i < node.device_count(); ++i)
    if (node.device(i).healthy && node.usage[i].slots == 0) ++idle;
  return idle >= r.count;
}

NodeScore KaiPolicy::score(const NodeView& node, const PodRequest& pod, const PodAllocation&) {
  const KaiRequirement r = kai_requirement(pod);
  const bool cpu_only = r.kind == KaiRequirement::Kind::CpuOnly;
  kai_node(node, node_);
  const KaiNode& k = node_;
  double s = kAvailability;  // the pod fits on idle resources (nothing releases)
  if (cpu_only && k.gpus == 0) s += kResourceType;
  if (!spread_) {
    const int64_t memory = kai_memory_per_device(r, k.gpu_memory);
    if (std::any_of(k.groups.begin(), k.groups.end(),
                    [&](const KaiNode::Group& g) { return fits_group(g, k.gpu_memory, memory); }))
      s += kGpuSharing;
  }
  const auto [free, overall] = placement_room(node, k, cpu_only);
  if (spread_) {
    // nodeResourceSpread: the share not allocated (GPUs: of the node's count).
    if (overall != 0) s += free / overall;
  } else if (overall != 0 && max_free_ != 0) {
    // getScoreOfCurrentNode: fewer free resources score higher, up to 9.
    s += min_free_ == max_free_ ? kMaxHighDensity
                                : kMaxHighDensity * (1 - (free - min_free_) / (max_free_ - min_free_));
  }
  return {s, s};
}

std::string KaiPolicy::over_capacity(const NodeView& node) const {
  for (size_t i = 0; i < node.device_count(); ++i) {
    const Device& d = node.device(i);
    const DeviceUsage& u = node.usage[i];
    // KAI lets one pod take more memory than the GPU has (an exact multiple
    // of it, docs/dialects.md); several pods never pass it together.
    if (u.cores > d.cores || (u.slots > 1 && u.memory_mib > d.memory_mib))
      return fmt::format("card {} holds {} MiB of {} and {} cores of {} ({} pods)", i, u.memory_mib,
                         d.memory_mib, u.cores, d.cores, u.slots);
  }
  return {};
}

void register_kai_policies() {
  register_policy("kai-binpack",
                  [](const PolicyArgs&) { return std::make_unique<KaiPolicy>("kai-binpack", false); });
  register_policy("kai-spread",
                  [](const PolicyArgs&) { return std::make_unique<KaiPolicy>("kai-spread", true); });
}

}  // namespace gpuslice::core
