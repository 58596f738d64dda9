// GpuClustering: keep pods of one GPU request shape together. Bands (the
// study's, 100-point scale), each raised by how full the node is:
//   node runs only this shape   75..100
//   runs this shape and others  50..75
//   runs no GPU pod             25..50
//   runs only other shapes       0..25
// For a sharing pod, the card left with least free compute.
#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

std::string shape_of(const PodRequest& pod) {
  const ContainerRequest* c = pod.first_device_container();
  return c ? fmt::format("{}/{}/{}/{}", c->count, c->memory_mib, c->memory_percent, c->cores) : std::string();
}

class GpuClusteringPolicy final : public Policy {
 public:
  explicit GpuClusteringPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "gpuclustering"; }
  bool chooses_share_card() const override { return true; }
  // The shape counts it reads change only when the node's pods do.
  bool score_changes_only_with_node() const override { return true; }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) override {
    const std::string shape = shape_of(pod);
    const auto it = running_.find(node.id);
    const bool idle = it == running_.end() || it->second.empty();
    const bool has_shape = !idle && it->second.count(shape) > 0;
    double base;
    if (has_shape)
      base = it->second.size() == 1 ? 75 : 50;
    else
      base = idle ? 25 : 0;
    const double used = kMaxSpecGpuMilli - static_cast<double>(node_free_milli(node));
    const double band = base + 25 * std::clamp(used / kMaxSpecGpuMilli, 0.0, 1.0);
    return {band - leftover_on_chosen_cards(node, allocation) * 1e-9, band};
  }
  void on_charge(const NodeView& node, const PodRequest& pod, const PodAllocation&) override {
    if (pod.wants_devices()) ++running_[node.id][shape_of(pod)];
  }
  void on_release(const NodeView& node, const PodRequest& pod, const PodAllocation&) override {
    if (!pod.wants_devices()) return;
    auto& shapes = running_[node.id];
    auto it = shapes.find(shape_of(pod));
    if (it != shapes.end() && --it->second == 0) shapes.erase(it);
  }

 private:
  std::unordered_map<size_t, std::map<std::string, int>> running_;  // node -> shape -> pods
};

}  // namespace

void register_gpuclustering() {
  register_policy("gpuclustering",
                  [](const PolicyArgs& a) { return std::make_unique<GpuClusteringPolicy>(a); });
}

}  // namespace gpuslice::core::research
