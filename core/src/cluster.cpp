#include "gpuslice/core/cluster.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>

namespace gpuslice::core {

uint64_t Cluster::next_epoch() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

namespace {
// A MIG-mode card's profiles, as the shape key spells them.
std::string mig_key(const Device& d) {
  std::string key;
  for (const auto& p : d.mig_profiles) {
    key += fmt::format("[{}/{}/{}/{}", p.name, p.memory_mib, p.cores, p.slice_count);
    for (const auto& pl : p.placements) key += fmt::format("@{}+{}", pl.start, pl.size);
    key += ']';
  }
  return key;
}

// Everything about a node that fit and scoring read, except names and UUIDs.
std::string shape_key(const Node& n) {
  std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|", n.model, n.capacity.cpu_milli, n.capacity.memory_mib,
                  n.gpu_isolation_provider, n.gpu_partition_honor, static_cast<int>(n.cards_from));
  for (const auto& d : n.devices)
    key += fmt::format("{}/{}/{}/{}/{}/{}/{}/{}/{}/{}{};", d.type, d.vendor, d.slots, d.memory_mib, d.cores,
                       d.numa, d.pcie, d.mode, d.healthy, d.index, mig_key(d));
  for (const auto& p : n.gpu_partitions)
    key += fmt::format("p{}/{}/{};", fmt::join(p.minors, ","), p.allocation_score,
                       p.ring_bus_bandwidth.value_or(-1));
  for (const auto& row : n.topology) key += fmt::format("{},", fmt::join(row, " "));
  return key;
}
}  // namespace

// Shape ids are process-wide, so caches keyed by shape (fragment memos,
// per-shape card masks) stay right when one policy sees several clusters.
uint32_t shape_id(const std::string& key) {
  static std::mutex mutex;
  static std::unordered_map<std::string, uint32_t> ids;
  std::lock_guard lock(mutex);
  return ids.try_emplace(key, static_cast<uint32_t>(ids.size())).first->second;
}

bool Cluster::same_state(size_t a, size_t b) const {
  if (shape_[a] != shape_[b] || !(host_used_[a] == host_used_[b])) return false;
  const auto ua = usage(a), ub = usage(b);
  return std::equal(ua.begin(), ua.end(), ub.begin(), ub.end());
}

size_t Cluster::add_node(Node node) {
  if (by_name_.count(node.name))
    throw std::invalid_argument(fmt::format("duplicate node name '{}'", node.name));
  // A cordon names UUIDs, so a cordoned node is a shape of its own.
  std::string key = shape_key(node);
  if (!node.cordoned_uuids.empty()) {
    key += fmt::format("|cordoned:{}|", fmt::join(node.cordoned_uuids, ","));
    for (const auto& d : node.devices) key += d.uuid + ",";
  }
  return append(std::move(node), shape_id(key));
}

Cluster Cluster::reordered(std::span<const size_t> order) const {
  if (order.size() != size()) throw std::invalid_argument("reordered: not a permutation of the nodes");
  Cluster out;
  for (size_t id : order) {
    if (id >= size() || out.by_name_.count(nodes_[id].name))
      throw std::invalid_argument("reordered: not a permutation of the nodes");
    out.append(nodes_[id], shape_[id]);
  }
  return out;
}

size_t Cluster::append(Node node, uint32_t shape) {
  epoch_.value = next_epoch();
  // A new epoch: no change is logged in it yet (an empty log means every
  // changed_at is 0 already, so building a fleet stays linear).
  if (!changes_.empty()) std::fill(changed_at_.begin(), changed_at_.end(), 0);
  changes_.clear();
  const size_t id = nodes_.size();
  by_name_.emplace(node.name, id);
  first_device_.push_back(static_cast<uint32_t>(usage_.size()));
  usage_.resize(usage_.size() + node.devices.size());
  host_used_.push_back({});
  version_.push_back(0);
  changed_at_.push_back(0);
  shape_.push_back(shape);
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<size_t> Cluster::find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::span<const DeviceUsage> Cluster::usage(size_t id) const {
  // From the offsets alone: reading the node's card list for its size
  // missed the cache once per node in a scan of 10,000 nodes.
  const uint32_t end =
      id + 1 < first_device_.size() ? first_device_[id + 1] : static_cast<uint32_t>(usage_.size());
  return {usage_.data() + first_device_[id], end - first_device_[id]};
}

NodeView Cluster::view(size_t id) const {
  return NodeView{id, &nodes_[id], usage(id), host_used_[id], version_[id], shape_[id]};
}

void Cluster::charge(size_t id, const PodAllocation& allocation, const HostResources& host) {
  apply(id, allocation, host, +1);
}

void Cluster::release(size_t id, const PodAllocation& allocation, const HostResources& host) {
  apply(id, allocation, host, -1);
}

void Cluster::clear_usage() {
  for (auto& u : usage_) u = {};
  for (auto& h : host_used_) h = {};
  for (auto& v : version_) ++v;
  epoch_.value = next_epoch();
  changes_.clear();
  std::fill(changed_at_.begin(), changed_at_.end(), 0);
}

void Cluster::apply(size_t id, const PodAllocation& allocation, const HostResources& host, int sign) {
  const auto& node = nodes_[id];
  auto charges = effective_charges(allocation, node.devices);
  for (const auto& c : charges) {
    if (c.device < 0 || static_cast<size_t>(c.device) >= node.devices.size())
      throw std::logic_error(fmt::format("allocation names card {} of node '{}' which has {}", c.device,
                                         node.name, node.devices.size()));
  }
  auto* base = usage_.data() + first_device_[id];
  if (sign < 0) {
    // Validate the whole release first so a bad call leaves usage untouched.
    for (const auto& c : charges) {
      if (!holds_charge(base[c.device], c.usage))
        throw std::logic_error(
            fmt::format("release of more than is held on node '{}' card {}", node.name, c.device));
    }
    if (host_used_[id].cpu_milli < host.cpu_milli || host_used_[id].memory_mib < host.memory_mib)
      throw std::logic_error(fmt::format("release of more host resources than held on node '{}'", node.name));
  }
  for (const auto& c : charges) add_charge(base[c.device], c.usage, sign);
  host_used_[id].cpu_milli += sign * host.cpu_milli;
  host_used_[id].memory_mib += sign * host.memory_mib;
  ++version_[id];
  // Bounded: past a few changes per node the older half goes; a reader
  // that far behind rescans, which costs about what the log would.
  if (changes_.size() >= std::max<size_t>(4096, 8 * nodes_.size())) {
    const size_t drop = changes_.size() / 2;
    changes_.erase(changes_.begin(), changes_.begin() + static_cast<std::ptrdiff_t>(drop));
    changes_base_ += drop;
  }
  changes_.push_back(static_cast<uint32_t>(id));
  changed_at_[id] = change_count();
}

}  // namespace gpuslice::core
