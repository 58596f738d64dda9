#include "gpuslice/sim/refusal_explainer.hpp"

#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/reasons.hpp"

namespace gpuslice::sim {

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
  cache.resize(cluster.size());
  const core::GpuPolicy gpu = core::GpuPolicy::parse(gpu_policy);
  std::vector<size_t> count(refusals_.size(), 0);
  for (size_t id = 0; id < cluster.size(); ++id) {
    auto& c = cache[id];
    if (c.version != cluster.version(id)) {
      const auto fit = device_fit ? device_fit->fit(cluster.view(id), pod)
                                  : core::fit_pod(cluster.view(id), pod, gpu, scratch_);
      c = {cluster.version(id), intern(fit.fits ? core::Refusal{} : fit.refusal)};
    }
    if (c.refusal >= count.size()) count.resize(c.refusal + 1, 0);
    ++count[c.refusal];
  }
  NodesPerReason nodes{};
  for (size_t r = 0; r < count.size(); ++r)
    if (count[r] > 0)
      refusals_[r].for_each_reason(
          [&](core::Reason reason) { nodes[static_cast<size_t>(reason)] += count[r]; });
  return nodes;
}

}  // namespace gpuslice::sim
