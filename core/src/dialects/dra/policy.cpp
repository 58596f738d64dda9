#include "gpuslice/core/dialects/dra/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuslice/core/dialects/dra/fleet.hpp"
#include "gpuslice/core/dialects/dra/hami_dra.hpp"
#include "gpuslice/core/fit.hpp"

namespace gpuslice::core::dra {
namespace {

constexpr int64_t kMaxNodeScore = 100;
constexpr int64_t kMiBytes = int64_t(1) << 20;
// schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what a pod asking
// nothing counts as in scoring (GetNonzeroRequests).
constexpr int64_t kNonzeroCpuMilli = 100;
constexpr int64_t kNonzeroMemoryMib = 200;

int64_t least_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

}  // namespace

int64_t default_profile_score(const HostResources& capacity, const HostResources& used,
                              const HostResources& pod) {
  const int64_t cpu = used.cpu_milli + (pod.cpu_milli > 0 ? pod.cpu_milli : kNonzeroCpuMilli);
  const int64_t memory = used.memory_mib + (pod.memory_mib > 0 ? pod.memory_mib : kNonzeroMemoryMib);
  // NodeResourcesFit, LeastAllocated: the weighted mean (weights 1) of the free share, in integers.
  const int64_t least =
      (least_requested(cpu, capacity.cpu_milli) + least_requested(memory, capacity.memory_mib)) / 2;
  // NodeResourcesBalancedAllocation: (1 - standard deviation of the two fractions) * 100.
  auto fraction = [](int64_t r, int64_t c) { return c == 0 ? 0.0 : std::min(1.0, double(r) / double(c)); };
  const double f1 = fraction(cpu, capacity.cpu_milli), f2 = fraction(memory, capacity.memory_mib);
  const double std_dev = std::abs(f1 - f2) / 2;
  const int64_t balanced = static_cast<int64_t>((1 - std_dev) * double(kMaxNodeScore));
  return least + balanced;
}

struct DraPolicy::NodeDevices {
  std::vector<ResourceSlice> slices;  // one per pool: the node's own, or those a DRA dump named
  std::vector<Pool> pools;
  NodeInfo info;
  size_t cards = 0;
  std::unordered_map<std::string, size_t> position;  // device key -> the card behind it
};

DraPolicy::DraPolicy() : classes_{hami_dra_class()}, allocator_(classes_, cache_) {}
DraPolicy::~DraPolicy() = default;

const DraPolicy::NodeDevices& DraPolicy::devices_of(const NodeView& node) {
  // Cached by node; a node object reused for another node (a reordered fleet) is rebuilt.
  auto& slot = nodes_[node.node];
  if (slot && slot->info.name == node.node->name && slot->cards == node.node->devices.size()) return *slot;
  slot = std::make_unique<NodeDevices>();
  // A card read from a DRA dump keeps its device's name and pool (its uuid
  // is the key, fleet.hpp); a HAMi card is published as HAMi-DRA would.
  auto slice_of = [&](const std::string& pool) -> ResourceSlice& {
    for (auto& s : slot->slices)
      if (s.pool == pool) return s;
    ResourceSlice s;
    s.name = pool + "-" + kHamiDraDriver;
    s.driver = kHamiDraDriver;
    s.pool = pool;
    s.node_name = node.node->name;
    slot->slices.push_back(std::move(s));
    return slot->slices.back();
  };
  for (size_t i = 0; i < node.device_count(); ++i) {
    if (!node.device(i).healthy || node.device(i).is_mig()) continue;
    Device device = hami_dra_device(node.device(i), int(i));
    std::string pool = node.node->name;
    if (const auto key = split_device_key(node.device(i).uuid); key && key->driver == kHamiDraDriver) {
      device.name = key->device;
      pool = key->pool;
    }
    slot->position[device_key(kHamiDraDriver, pool, device.name)] = i;
    slice_of(pool).devices.push_back(std::move(device));
  }
  slot->info = NodeInfo{node.node->name, {}};
  slot->cards = node.node->devices.size();
  slot->pools = gather_pools(slot->slices, slot->info);
  return *slot;
}

FitResult DraPolicy::fit(const NodeView& node, const PodRequest& pod) {
  FitResult result;
  result.allocation.containers.assign(pod.container_count(), {});
  result.allocation.init_count = pod.init_containers.size();
  const HostShortfall host = host_shortfall(node, pod);
  if (host.any()) {
    if (host.cpu) result.refusal.add_node_wide(Reason::InsufficientCpu);
    if (host.memory) result.refusal.add_node_wide(Reason::InsufficientMemory);
    return result;
  }
  // The webhook's claims, one per GPU container, allocated together.
  const int64_t card_memory = node.device_count() ? node.device(0).memory_mib : 0;
  if (!enough_devices(node, pod, card_memory)) {
    result.refusal.add_node_wide(Reason::NodeInsufficientDevice);
    return result;
  }
  const NodeDevices& devices = devices_of(node);
  std::vector<ClaimSpec> claims;
  std::vector<size_t> container_of;
  for (size_t c = 0; c < pod.container_count(); ++c) {
    if (c < pod.init_containers.size()) continue;  // init containers run before; their GPUs are the pod's too
    if (auto claim = hami_dra_claim(pod.container_at(c), card_memory)) {
      claims.push_back(std::move(*claim));
      container_of.push_back(c);
    }
  }
  if (claims.empty()) {
    result.fits = true;
    return result;
  }
  // What the node's GPUs hold, as the allocated state's consumed capacity.
  AllocatedState state;
  for (const auto& pool : devices.pools)
    for (const auto& slice : pool.slices)
      for (const auto& d : slice) {
        const DeviceUsage& u = node.usage[devices.position.at(d.key)];
        if (u.slots == 0 && u.memory_mib == 0 && u.cores == 0) continue;
        state.capacity[d.key] = {{"cores", int64_t(u.cores) * 1000},
                                 {"memory", u.memory_mib * kMiBytes * 1000}};
      }
  std::vector<const ClaimSpec*> pointers;
  for (const auto& c : claims) pointers.push_back(&c);
  std::optional<std::vector<Allocation>> allocations;
  try {
    allocations = allocator_.allocate(devices.pools, pointers, state, devices.info);
  } catch (const AllocationError&) {
    allocations.reset();  // kube-scheduler's Filter errors: the node is not used for the pod
  }
  if (!allocations) {
    result.refusal.add_node_wide(Reason::NodeInsufficientDevice);
    return result;
  }
  for (size_t k = 0; k < allocations->size(); ++k) {
    auto& grants = result.allocation.containers[container_of[k]];
    for (const auto& r : (*allocations)[k].results) {
      const int position = static_cast<int>(devices.position.at(device_key(r.driver, r.pool, r.device)));
      int64_t memory_mib = 0, cores = 0;
      for (const auto& [name, milli] : r.consumed_capacity) {
        if (name == "memory") memory_mib = milli / 1000 / kMiBytes;
        if (name == "cores") cores = milli / 1000;
      }
      grants.push_back(DeviceGrant{position, memory_mib, static_cast<int32_t>(cores), kRatioFromMemory, 0});
    }
  }
  result.fits = true;
  return result;
}

// A necessary condition, checked before the allocator runs (most nodes of a
// full fleet fail it): each claim's request needs `count` devices on which
// what it consumes still fits. On a HAMi-DRA device a request consumes its
// memory (at least the 1Mi minimum, in whole MiB already) or, not asking,
// the default: the whole card; its cores or, not asking, all of them
// (hami_dra_device's request policies). The allocator needs exactly these
// devices and more (distinct ones across the pod's claims), so a node failing
// here is one the allocator refuses too.
bool DraPolicy::enough_devices(const NodeView& node, const PodRequest& pod, int64_t card_memory) const {
  for (size_t c = pod.init_containers.size(); c < pod.container_count(); ++c) {
    const ContainerRequest& ask = pod.container_at(c);
    if (!ask.wants_devices()) continue;
    const int64_t memory = ask.memory_on(card_memory);
    int32_t usable = 0;
    for (size_t i = 0; i < node.device_count(); ++i) {
      const core::Device& d = node.device(i);
      if (!d.healthy || d.is_mig()) continue;
      const DeviceUsage& u = node.usage[i];
      const int64_t needs_memory = memory > 0 ? memory : d.memory_mib;
      const int64_t needs_cores = ask.cores > 0 ? ask.cores : d.cores;
      if (u.memory_mib + needs_memory <= d.memory_mib && u.cores + needs_cores <= d.cores) ++usable;
    }
    if (usable < ask.count) return false;
  }
  return true;
}

NodeScore DraPolicy::score(const NodeView& node, const PodRequest& pod, const PodAllocation&) {
  const double s = static_cast<double>(default_profile_score(node.node->capacity, node.host_used, pod.host));
  return {s, s};
}

std::string DraPolicy::over_capacity(const NodeView& node) const {
  for (size_t i = 0; i < node.device_count(); ++i) {
    const core::Device& d = node.device(i);
    const DeviceUsage& u = node.usage[i];
    if (u.cores > d.cores || u.memory_mib > d.memory_mib)
      return fmt::format("card {} holds {} MiB of {} and {} cores of {}", i, u.memory_mib, d.memory_mib,
                         u.cores, d.cores);
  }
  return {};
}

void register_dra_policies() {
  register_policy("dra", [](const PolicyArgs&) { return std::make_unique<DraPolicy>(); });
}

}  // namespace gpuslice::core::dra
