// GpuClustering, as the study's artifact scores it (pkg/simulator/plugin/
// gpu_clustering_score.go): keep pods of one GPU tag together. Tags: every
// sharing pod "share-gpu", a whole-card pod "<n>-gpu" by its card count;
// CPU-only pods score 0 on every node. Bands (integer arithmetic), each
// raised by how much GPU the node has in use, 25 x (8000 - free) / 8000:
//   node runs only this tag      75..100
//   runs this tag and others     50..75
//   runs no GPU pod              25..50
//   runs only other tags          0..25
// For a sharing pod, the card left with least free capacity.
#include <map>
#include <unordered_map>

#include "common.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

// 0: no GPU; -1: a share of one card; n: n whole cards.
int gpu_tag(const PodRequest& pod) {
  const ContainerRequest* c = pod.first_device_container();
  if (!c) return 0;
  const bool whole = c->count > 1 || (c->cores >= 100 && (c->memory_percent == 100 && c->memory_mib == 0));
  return whole ? c->count : -1;
}

class GpuClusteringPolicy final : public Policy, public ReserveHooks {
 public:
  explicit GpuClusteringPolicy(const PolicyArgs& args) { default_gpu_policy_ = args.gpu_policy; }
  std::string_view name() const override { return "gpuclustering"; }
  CardChooser* card_chooser() override { return &card_; }
  ReserveHooks* reserve_hooks() override { return this; }
  // The score reads which tags a node holds (a bit per tag, its state key);
  // the tag counts change only when the node's pods do.
  PolicyTraits traits() const override {
    return {.score_reads_only_node_state = false,
            .keys_node_state = true,
            .score_changes_only_with_node = true,
            .ties_by_name = false};
  }
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation&) override {
    const int tag = gpu_tag(pod);
    if (tag == 0) return {0, 0};
    const auto it = running_.find(node.id);
    const size_t tags = it == running_.end() ? 0 : it->second.size();
    const bool has_tag = tags > 0 && it->second.count(tag) > 0;
    int64_t base;
    if (has_tag)
      base = tags == 1 ? 75 : 50;
    else
      base = tags == 0 ? 25 : 0;
    const int64_t used = 8000 - node_free_milli(node);
    const double score = static_cast<double>(25 * used / 8000 + base);
    return {score, score};
  }
  // Which tags a node holds: a bit per tag.
  std::optional<uint64_t> node_state_key(size_t node) const override {
    const auto it = running_.find(node);
    if (it == running_.end()) return 0;
    uint64_t bits = 0;
    for (const auto& [tag, pods] : it->second) {
      if (tag < -1 || tag > 62) return std::nullopt;
      bits |= uint64_t{1} << (tag + 1);
    }
    return bits;
  }
  void reserve(const NodeView& node, const PodRequest& pod, const PodAllocation&) override {
    if (const int tag = gpu_tag(pod)) ++running_[node.id][tag];
  }
  void unreserve(const NodeView& node, const PodRequest& pod, const PodAllocation&) override {
    const int tag = gpu_tag(pod);
    if (!tag) return;
    auto& tags = running_[node.id];
    auto it = tags.find(tag);
    if (it != tags.end() && --it->second == 0) tags.erase(it);
  }

 private:
  std::unordered_map<size_t, std::map<int, int>> running_;  // node -> tag -> pods
  BestFitCard card_;
};

}  // namespace

void register_gpuclustering() {
  register_policy("gpuclustering",
                  [](const PolicyArgs& a) { return std::make_unique<GpuClusteringPolicy>(a); });
}

}  // namespace gpuslice::core::research
