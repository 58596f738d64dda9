// The fleet and what is in use on it. Usage lives in one flat array so the
// hot path walks contiguous integers; every change bumps the node's version
// so policies can cache per-node facts (e.g. fragmentation).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

// A read-only look at one node and its current usage.
struct NodeView {
  size_t id = 0;
  const Node* node = nullptr;
  std::span<const DeviceUsage> usage;
  HostResources host_used;
  uint64_t version = 0;
  uint32_t shape = 0;  // Cluster::shape
  const Device& device(size_t i) const { return node->devices[i]; }
  size_t device_count() const { return node->devices.size(); }
};

class Cluster {
 public:
  // Adds a node; names must be unique. Returns its id (dense, from 0).
  size_t add_node(Node node);
  // The same nodes, unused, in `order` (a permutation of the ids): node i of
  // the result is node order[i] here. Shapes carry over without rebuilding
  // their keys (the study reorders the fleet per seed).
  Cluster reordered(std::span<const size_t> order) const;
  size_t size() const { return nodes_.size(); }
  const Node& node(size_t id) const { return nodes_[id]; }
  std::optional<size_t> find(std::string_view name) const;
  NodeView view(size_t id) const;
  std::span<const DeviceUsage> usage(size_t id) const;
  const HostResources& host_used(size_t id) const { return host_used_[id]; }
  uint64_t version(size_t id) const { return version_[id]; }
  // Nodes built alike (same cards, host capacity, topology and model; names
  // and card UUIDs aside) share a shape: with equal usage they are
  // interchangeable for any pod that does not name card UUIDs.
  uint32_t shape(size_t id) const { return shape_[id]; }
  // True when two nodes are interchangeable right now (same shape, same usage).
  bool same_state(size_t a, size_t b) const;

  // Adds (charge) or removes (release) what a placed pod holds. Release
  // refuses to drive any counter negative: that would be an accounting bug.
  void charge(size_t id, const PodAllocation& allocation, const HostResources& host);
  void release(size_t id, const PodAllocation& allocation, const HostResources& host);
  void clear_usage();

  // Fleet totals (capacity), handy for metrics.
  size_t device_count() const { return usage_.size(); }

  // Identity of this cluster's history, and the nodes changed since a point
  // of it: lets an index follow the cluster without scanning every node.
  // A new epoch (clear_usage, added nodes) means "rebuild from scratch".
  // Positions are absolute; the log keeps only its recent part (a server
  // charges for months), so a reader behind first_change() rescans.
  uint64_t epoch() const { return epoch_.value; }
  size_t change_count() const { return changes_base_ + changes_.size(); }
  size_t first_change() const { return changes_base_; }
  uint32_t changed_node(size_t i) const { return changes_[i - changes_base_]; }
  // One past the log position of the node's latest change in this epoch (0:
  // none). A node changed since position p exactly when changed_at > p, and
  // log entry i is its latest when changed_at == i + 1: a reader skips older
  // entries without state of its own.
  uint64_t changed_at(size_t id) const { return changed_at_[id]; }

 private:
  void apply(size_t id, const PodAllocation& allocation, const HostResources& host, int sign);
  size_t append(Node node, uint32_t shape);

  std::vector<Node> nodes_;
  std::vector<uint32_t> first_device_;
  std::vector<DeviceUsage> usage_;
  std::vector<HostResources> host_used_;
  std::vector<uint64_t> version_;
  std::vector<uint32_t> shape_;
  std::vector<uint32_t> changes_;
  std::vector<uint64_t> changed_at_;
  size_t changes_base_ = 0;  // absolute position of changes_[0]
  // A copy is a new history: it gets its own epoch.
  struct Epoch {
    uint64_t value = next_epoch();
    Epoch() = default;
    Epoch(const Epoch&) : value(next_epoch()) {}
    Epoch& operator=(const Epoch&) {
      value = next_epoch();
      return *this;
    }
  };
  Epoch epoch_;
  static uint64_t next_epoch();
  // Looked up by string_view without building a string (the extender
  // looks up every node kube-scheduler names, per filter).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> by_name_;
};

}  // namespace gpuslice::core
