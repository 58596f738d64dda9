// HAMi v2.10's namespace ResourceQuota for GPU slices (pkg/device/quota.go):
// which keys it manages, what a placed pod counts against them, and the
// per-card check its Fit makes before the card's memory check.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/allocation.hpp"

namespace gpuslice::core {

// The ResourceQuota keys HAMi manages for NVIDIA cards: "limits." and the
// device's memory or core resource name (managedQuotaName); every other key
// (requests.*, cpu, pods, nvidia.com/gpu, gpumem-percentage) is not its.
inline constexpr std::string_view kQuotaMemoryKey = "limits.nvidia.com/gpumem";
inline constexpr std::string_view kQuotaCoresKey = "limits.nvidia.com/gpucores";
// The names HAMi's metrics and used-entries carry (the key without "limits.").
inline constexpr std::string_view kQuotaMemoryResource = "nvidia.com/gpumem";
inline constexpr std::string_view kQuotaCoresResource = "nvidia.com/gpucores";

// What a pod counts against its namespace: MiB and core percent summed over
// its cards, each card holding max(init containers' peak, app containers'
// sum) (countPodDevices over CollapseInitContainerUsage): a two-card pod of
// 3000 MiB counts 6000.
struct QuotaUse {
  int64_t memory_mib = 0;
  int64_t cores = 0;
  friend bool operator==(const QuotaUse&, const QuotaUse&) = default;
};
QuotaUse quota_use(const PodAllocation& allocation);

// The limits one ResourceQuota object sets under the managed keys.
struct QuotaLimits {
  std::optional<int64_t> memory_mib, cores;
  bool empty() const { return !memory_mib && !cores; }
  friend bool operator==(const QuotaLimits&, const QuotaLimits&) = default;
};

// A ResourceQuota as read from a dump, a file or the API: its namespace,
// name and the limits it sets under the managed keys.
struct NamespaceQuota {
  std::string ns, name;
  QuotaLimits limits;
  int line = 0;  // where it was written (0: from memory)
};

// What a namespace may still take, per limited key (limit - used; may be
// negative when usage already passed a lowered limit). Absent: no limit.
struct QuotaHeadroom {
  std::optional<int64_t> memory_mib, cores;
  // HAMi FitQuota: refused when used + request > limit (strict: reaching
  // the limit exactly fits; an explicit 0 refuses any positive request).
  bool admits(const QuotaUse& pod_total) const {
    return (!memory_mib || pod_total.memory_mib <= *memory_mib) && (!cores || pod_total.cores <= *cores);
  }
  // Which key refuses `pod_total` and by how much (0 when it fits).
  int64_t memory_over(const QuotaUse& t) const {
    return memory_mib ? std::max<int64_t>(0, t.memory_mib - *memory_mib) : 0;
  }
  int64_t cores_over(const QuotaUse& t) const { return cores ? std::max<int64_t>(0, t.cores - *cores) : 0; }
};

// The pod's quota total if the candidate grant were added: `so_far` holds
// the containers placed before (init first, `so_far.init_count` of them),
// `picks` this container's cards so far; `index` is this container's place.
// (HAMi nvidia fitQuota: allocated + tmpDevs + the card, collapsed.)
QuotaUse quota_use_with(const PodAllocation& so_far, size_t index, std::span<const DeviceGrant> picks,
                        const DeviceGrant& candidate);

// Every namespace's limits and usage, as HAMi's QuotaManager keeps them.
class QuotaBook {
 public:
  // AddQuota: each managed key the object sets becomes the namespace's
  // limit (the last object written wins per key).
  void add_quota(const std::string& ns, const QuotaLimits& limits);
  // DelQuota: each managed key the object set is unlimited again.
  void remove_quota(const std::string& ns, const QuotaLimits& limits);
  void update_quota(const std::string& ns, const QuotaLimits& before, const QuotaLimits& after) {
    remove_quota(ns, before);
    add_quota(ns, after);
  }
  void add(const NamespaceQuota& q) { add_quota(q.ns, q.limits); }
  // AddUsage / RmUsage (RmUsage clamps at zero, as HAMi's does).
  void charge(const std::string& ns, const QuotaUse& use);
  void release(const std::string& ns, const QuotaUse& use);
  void clear_usage();

  // Nothing when the namespace has no limit set.
  std::optional<QuotaHeadroom> headroom(std::string_view ns) const;
  bool has_limits() const { return limited_namespaces_ > 0; }
  QuotaUse used(std::string_view ns) const;

  // HAMi's entries (namespace, resource, used, limit, limit set), for its
  // gauges, namespaces and resources in name order.
  struct Entry {
    std::string ns;
    std::string_view resource;
    int64_t used = 0, limit = 0;
    bool limit_set = false;
  };
  std::vector<Entry> entries() const;

 private:
  struct Key {
    int64_t used = 0, limit = 0;
    bool limit_set = false, present = false;  // present: HAMi has an entry for it
  };
  struct Namespace {
    Key memory, cores;
    bool limited() const { return memory.limit_set || cores.limit_set; }
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  void track_limited(bool before, const Namespace& after);
  std::unordered_map<std::string, Namespace, NameHash, std::equal_to<>> namespaces_;
  size_t limited_namespaces_ = 0;
};

}  // namespace gpuslice::core
