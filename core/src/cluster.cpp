#include "gpuslice/core/cluster.hpp"

#include <fmt/format.h>

#include <atomic>
#include <stdexcept>

namespace gpuslice::core {

uint64_t Cluster::next_epoch() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

size_t Cluster::add_node(Node node) {
  epoch_.value = next_epoch();
  changes_.clear();
  if (by_name_.count(node.name))
    throw std::invalid_argument(fmt::format("duplicate node name '{}'", node.name));
  const size_t id = nodes_.size();
  by_name_.emplace(node.name, id);
  first_device_.push_back(static_cast<uint32_t>(usage_.size()));
  usage_.resize(usage_.size() + node.devices.size());
  host_used_.push_back({});
  version_.push_back(0);
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<size_t> Cluster::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::span<const DeviceUsage> Cluster::usage(size_t id) const {
  return {usage_.data() + first_device_[id], nodes_[id].devices.size()};
}

NodeView Cluster::view(size_t id) const {
  return NodeView{id, &nodes_[id], usage(id), host_used_[id], version_[id]};
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
}

void Cluster::apply(size_t id, const PodAllocation& allocation, const HostResources& host, int sign) {
  const auto& node = nodes_[id];
  auto charges = effective_charges(allocation);
  for (const auto& c : charges) {
    if (c.device < 0 || static_cast<size_t>(c.device) >= node.devices.size())
      throw std::logic_error(fmt::format("allocation names card {} of node '{}' which has {}", c.device,
                                         node.name, node.devices.size()));
  }
  auto* base = usage_.data() + first_device_[id];
  if (sign < 0) {
    // Validate the whole release first so a bad call leaves usage untouched.
    for (const auto& c : charges) {
      const auto& u = base[c.device];
      if (u.slots < c.usage.slots || u.memory_mib < c.usage.memory_mib || u.cores < c.usage.cores)
        throw std::logic_error(
            fmt::format("release of more than is held on node '{}' card {}", node.name, c.device));
    }
    if (host_used_[id].cpu_milli < host.cpu_milli || host_used_[id].memory_mib < host.memory_mib)
      throw std::logic_error(fmt::format("release of more host resources than held on node '{}'", node.name));
  }
  for (const auto& c : charges) {
    auto& u = base[c.device];
    u.slots += sign * c.usage.slots;
    u.memory_mib += sign * c.usage.memory_mib;
    u.cores += sign * c.usage.cores;
  }
  host_used_[id].cpu_milli += sign * host.cpu_milli;
  host_used_[id].memory_mib += sign * host.memory_mib;
  ++version_[id];
  changes_.push_back(static_cast<uint32_t>(id));
}

}  // namespace gpuslice::core
