#include "gpuslice/sim/refusal_explainer.hpp"

#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/reasons.hpp"

namespace gpuslice::sim {

namespace {
const core::Refusal kFits{};
}  // namespace

uint32_t RefusalExplainer::intern(const core::Refusal& refusal) {
  auto& ids = refusal_ids_[refusal.hash()];
  for (uint32_t id : ids)
    if (refusals_[id] == refusal) return id;
  const auto id = static_cast<uint32_t>(refusals_.size());
  refusals_.push_back(refusal);
  ids.push_back(id);
  return id;
}

NodesPerReason RefusalExplainer::reasons(const core::Cluster& cluster, size_t shape,
                                         const core::PodRequest& pod, const std::string& gpu_policy,
                                         core::DeviceFit* device_fit) {
  if (epoch_ != cluster.epoch()) {
    by_shape_.clear();
    epoch_ = cluster.epoch();
  }
  auto& cache = by_shape_[shape];
  if (gpu_policy != gpu_text_) {
    gpu_ = core::GpuPolicy::parse(gpu_policy);
    gpu_text_ = gpu_policy;
  }
  auto refit = [&](size_t id) {
    auto& c = cache.nodes[id];
    if (c.version == cluster.version(id)) return;
    const bool counted = c.version != UINT64_MAX;
    if (counted) --cache.count[c.refusal];  // counted before: taken back
    const auto fit = device_fit ? device_fit->fit(cluster.view(id), pod)
                                : core::fit_pod(cluster.view(id), pod, gpu_, scratch_);
    const core::Refusal& refusal = fit.fits ? kFits : fit.refusal;
    // Most refits find the node's refusal unchanged: compared before hashed.
    const uint32_t id_now = counted && refusals_[c.refusal] == refusal ? c.refusal : intern(refusal);
    c = {cluster.version(id), id_now};
    if (c.refusal >= cache.count.size()) cache.count.resize(c.refusal + 1, 0);
    ++cache.count[c.refusal];
  };
  if (cache.nodes.size() != cluster.size()) cache = Shape{std::vector<Cached>(cluster.size()), {}, 0};
  if (cache.seen < cluster.first_change() || cache.seen == 0) {
    // New, or behind what the cluster's change log keeps: every node.
    for (size_t id = 0; id < cluster.size(); ++id) refit(id);
  } else {
    // Only the nodes changed since the last call, each at its latest entry:
    // a scan of every node's version per refusal was most of this call.
    for (size_t i = cache.seen; i < cluster.change_count(); ++i) {
      const uint32_t id = cluster.changed_node(i);
      if (cluster.changed_at(id) == i + 1) refit(id);
    }
  }
  cache.seen = cluster.change_count();
  const auto& count = cache.count;
  NodesPerReason nodes{};
  for (size_t r = 0; r < count.size(); ++r)
    if (count[r] > 0)
      refusals_[r].for_each_reason(
          [&](core::Reason reason) { nodes[static_cast<size_t>(reason)] += count[r]; });
  return nodes;
}

}  // namespace gpuslice::sim
