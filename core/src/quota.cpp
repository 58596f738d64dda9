#include "gpuslice/core/quota.hpp"

#include <algorithm>

namespace gpuslice::core {

namespace {

// One card's collapsed demand: init containers' peak and app containers'
// sum kept apart, memory and cores each (CollapseInitContainerUsage takes
// max(init, app) of each on its own).
struct CardDemand {
  int device = 0;
  int64_t init_memory = 0, init_cores = 0, app_memory = 0, app_cores = 0;
};

// A pod has a handful of grants: a flat list beats a map here.
class Collapse {
 public:
  void add(const DeviceGrant& g, bool init) {
    CardDemand& d = at(g.device);
    if (init) {
      d.init_memory = std::max(d.init_memory, g.memory_mib);
      d.init_cores = std::max<int64_t>(d.init_cores, g.cores);
    } else {
      d.app_memory += g.memory_mib;
      d.app_cores += g.cores;
    }
  }
  QuotaUse total() const {
    QuotaUse t;
    for (const auto& d : cards_) {
      t.memory_mib += std::max(d.init_memory, d.app_memory);
      t.cores += std::max(d.init_cores, d.app_cores);
    }
    return t;
  }

 private:
  CardDemand& at(int device) {
    for (auto& d : cards_)
      if (d.device == device) return d;
    cards_.push_back({device});
    return cards_.back();
  }
  std::vector<CardDemand> cards_;
};

void add_containers(Collapse& c, const PodAllocation& a, size_t skip) {
  for (size_t i = 0; i < a.containers.size(); ++i) {
    if (i == skip) continue;
    for (const auto& g : a.containers[i]) c.add(g, i < a.init_count);
  }
}

}  // namespace

QuotaUse quota_use(const PodAllocation& allocation) {
  Collapse c;
  add_containers(c, allocation, SIZE_MAX);
  return c.total();
}

QuotaUse quota_use_with(const PodAllocation& so_far, size_t index, std::span<const DeviceGrant> picks,
                        const DeviceGrant& candidate) {
  Collapse c;
  add_containers(c, so_far, index);
  const bool init = index < so_far.init_count;
  for (const auto& g : picks) c.add(g, init);
  c.add(candidate, init);
  return c.total();
}

void QuotaBook::track_limited(bool before, const Namespace& after) {
  if (before && !after.limited()) --limited_namespaces_;
  if (!before && after.limited()) ++limited_namespaces_;
}

void QuotaBook::add_quota(const std::string& ns, const QuotaLimits& limits) {
  if (limits.empty()) return;  // HAMi creates no entry for an object without managed keys
  Namespace& n = namespaces_[ns];
  const bool before = n.limited();
  auto set = [](Key& k, const std::optional<int64_t>& v) {
    if (!v) return;
    k.limit = *v;
    k.limit_set = true;
    k.present = true;
  };
  set(n.memory, limits.memory_mib);
  set(n.cores, limits.cores);
  track_limited(before, n);
}

void QuotaBook::remove_quota(const std::string& ns, const QuotaLimits& limits) {
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) return;
  Namespace& n = it->second;
  const bool before = n.limited();
  // The entry stays (its usage with it), unlimited: delQuotaLocked.
  if (limits.memory_mib) n.memory.limit = 0, n.memory.limit_set = false;
  if (limits.cores) n.cores.limit = 0, n.cores.limit_set = false;
  track_limited(before, n);
}

void QuotaBook::charge(const std::string& ns, const QuotaUse& use) {
  Namespace& n = namespaces_[ns];
  // AddUsage makes both entries, whatever their values (countPodDevices).
  n.memory.used += use.memory_mib;
  n.cores.used += use.cores;
  n.memory.present = n.cores.present = true;
}

void QuotaBook::release(const std::string& ns, const QuotaUse& use) {
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) return;
  Namespace& n = it->second;
  n.memory.used = std::max<int64_t>(0, n.memory.used - use.memory_mib);
  n.cores.used = std::max<int64_t>(0, n.cores.used - use.cores);
}

void QuotaBook::clear_usage() {
  for (auto& [ns, n] : namespaces_) n.memory.used = n.cores.used = 0;
}

std::optional<QuotaHeadroom> QuotaBook::headroom(std::string_view ns) const {
  if (limited_namespaces_ == 0) return std::nullopt;
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end() || !it->second.limited()) return std::nullopt;
  const Namespace& n = it->second;
  QuotaHeadroom h;
  if (n.memory.limit_set) h.memory_mib = n.memory.limit - n.memory.used;
  if (n.cores.limit_set) h.cores = n.cores.limit - n.cores.used;
  return h;
}

QuotaUse QuotaBook::used(std::string_view ns) const {
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) return {};
  return {it->second.memory.used, it->second.cores.used};
}

std::vector<QuotaBook::Entry> QuotaBook::entries() const {
  std::vector<Entry> out;
  for (const auto& [ns, n] : namespaces_) {
    if (n.memory.present)
      out.push_back({ns, kQuotaMemoryResource, n.memory.used, n.memory.limit, n.memory.limit_set});
    if (n.cores.present)
      out.push_back({ns, kQuotaCoresResource, n.cores.used, n.cores.limit, n.cores.limit_set});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.ns != b.ns ? a.ns < b.ns : a.resource < b.resource;
  });
  return out;
}

}  // namespace gpuslice::core
