// DeviceShare's Filter (plugin.go: the isolation-provider check, then
// Allocate), its grants (fillGPUTotalMem) and its Score (scoreNode).
#include "gpuslice/core/dialects/koordinator/policy.hpp"

#include <fmt/format.h>

#include "allocate.hpp"

namespace gpuslice::core {

namespace {

// A grant as DeviceShare records it: the per-GPU request with memory and
// ratio filled in from the card's total when the request names only one.
DeviceGrant grant_on(const KoordinatorCard& card, const KoordinatorRequirement& r) {
  int64_t bytes = r.bytes.value_or(0);
  int64_t ratio = r.ratio.value_or(0);
  if (r.bytes && !r.ratio) ratio = memory_ratio_of(bytes, card.total_bytes);
  if (r.ratio && !r.bytes) bytes = *r.ratio * card.total_bytes / 100;  // memoryRatioToBytes
  DeviceGrant g;
  g.device = card.position;
  g.cores = static_cast<int32_t>(r.core.value_or(0));
  g.memory_mib = bytes / DeviceUsage::kMiB;
  g.memory_sub_mib = static_cast<int32_t>(bytes % DeviceUsage::kMiB);
  g.memory_ratio = static_cast<int32_t>(ratio);
  return g;
}

}  // namespace

FitResult KoordinatorPolicy::fit(const NodeView& node, const PodRequest& pod) {
  FitResult result;
  // kube-scheduler's NodeResourcesFit runs before DeviceShare.
  const HostShortfall host = host_shortfall(node, pod);
  if (host.cpu) result.refusal.add_node_wide(Reason::InsufficientCpu);
  if (host.memory) result.refusal.add_node_wide(Reason::InsufficientMemory);
  if (host.any()) return result;
  result.allocation.containers.assign(pod.container_count(), {});
  result.allocation.init_count = pod.init_containers.size();
  const auto r = koordinator_requirement(pod);
  if (!r) {  // no device asked: DeviceShare skips the pod
    result.fits = true;
    return result;
  }
  const Node& n = *node.node;
  if (r->shared && !pod.gpu_isolation_provider.empty() &&
      pod.gpu_isolation_provider != n.gpu_isolation_provider) {
    // An Error status in Koordinator: kube-scheduler abandons the whole
    // cycle (docs/dialects.md); here the node alone refuses.
    result.refusal.add_node_wide(Reason::KoordIsolationProviderMismatch);
    return result;
  }
  if (n.devices.empty()) {
    result.refusal.add_node_wide(Reason::KoordInsufficientGpuDevices);
    return result;
  }
  const auto cards = koordinator_cards(node);
  const auto got = koordinator::allocate(n, cards, *r, config_);
  if (got.positions.empty()) {
    result.refusal.add_node_wide(*got.reason);
    return result;
  }
  auto& grants = result.allocation.containers[pod.first_device_index()];
  for (int position : got.positions) grants.push_back(grant_on(cards[static_cast<size_t>(position)], *r));
  result.fits = true;
  return result;
}

bool KoordinatorPolicy::may_fit(const NodeView& node, const PodRequest& pod) {
  if (host_shortfall(node, pod).any()) return false;
  const ContainerRequest* c = pod.first_device_container();
  if (!c) return true;
  // Enough cards with room for one GPU's share: necessary for every stage.
  int with_room = 0;
  const int32_t percent = c->memory_percent == kMemoryPercentUnset ? 0 : c->memory_percent;
  for (size_t i = 0; i < node.device_count() && with_room < c->count; ++i) {
    const Device& d = node.device(i);
    const DeviceUsage& u = node.usage[i];
    if (!d.healthy) continue;
    if (c->cores > d.cores - u.cores) continue;
    if (percent > 100 - u.memory_ratio) continue;
    if (c->memory_bytes > d.memory_mib * DeviceUsage::kMiB - u.memory_bytes()) continue;
    ++with_room;
  }
  return with_room >= c->count;
}

NodeScore KoordinatorPolicy::score(const NodeView& node, const PodRequest& pod, const PodAllocation&) {
  const auto r = koordinator_requirement(pod);
  if (!r) return {};
  const double s =
      static_cast<double>(koordinator_node_score(*r, config_.most_allocated, koordinator_cards(node)));
  return {s, s};
}

// DeviceShare checks only what a pod asks; what it fills in may pass the
// card: the ratio of a gpu-memory grant is truncated (under by less than
// one percent), so grants by ratio beside it may take up to one percent of
// the card's bytes more per pod than the card has.
std::string KoordinatorPolicy::over_capacity(const NodeView& node) const {
  for (size_t i = 0; i < node.device_count(); ++i) {
    const Device& d = node.device(i);
    const DeviceUsage& u = node.usage[i];
    const int64_t bytes = d.memory_mib * DeviceUsage::kMiB;
    if (u.cores > d.cores || u.memory_ratio > 100 || u.memory_bytes() > bytes + bytes * u.slots / 100)
      return fmt::format(
          "card {} holds gpu-core {} of {}, gpu-memory {} of {} bytes, gpu-memory-ratio {} of 100", i,
          u.cores, d.cores, u.memory_bytes(), d.memory_mib * DeviceUsage::kMiB, u.memory_ratio);
  }
  return {};
}

void register_koordinator_policies() {
  struct Variant {
    const char* name;
    bool most, fixed;
  };
  for (const Variant v :
       {Variant{"koordinator", false, false}, Variant{"koordinator-most", true, false},
        Variant{"koordinator-fixed", false, true}, Variant{"koordinator-most-fixed", true, true}}) {
    const KoordinatorConfig config{v.name, v.most, v.fixed};
    register_policy(v.name,
                    [config](const PolicyArgs&) { return std::make_unique<KoordinatorPolicy>(config); });
  }
}

}  // namespace gpuslice::core
