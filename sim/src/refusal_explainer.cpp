#include "gpuslice/sim/refusal_explainer.hpp"

#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/reasons.hpp"

namespace gpuslice::sim {

namespace {
const core::Refusal kFits{};
constexpr uint64_t kUnfitted = UINT64_MAX;
}  // namespace

RefusalExplainer::RefusalExplainer() { intern(kFits); }

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
  const auto& count = brought_up_to_date(cluster, shape, pod, gpu_policy, device_fit).count;
  NodesPerReason nodes{};
  for (size_t r = 0; r < count.size(); ++r)
    if (count[r] > 0)
      refusals_[r].for_each_reason(
          [&](core::Reason reason) { nodes[static_cast<size_t>(reason)] += count[r]; });
  return nodes;
}

size_t RefusalExplainer::fitting(const core::Cluster& cluster, size_t shape, const core::PodRequest& pod,
                                 const std::string& gpu_policy, core::DeviceFit* device_fit) {
  const auto& count = brought_up_to_date(cluster, shape, pod, gpu_policy, device_fit).count;
  return kFitsId < count.size() ? count[kFitsId] : 0;
}

RefusalExplainer::Shape& RefusalExplainer::brought_up_to_date(const core::Cluster& cluster, size_t shape,
                                                              const core::PodRequest& pod,
                                                              const std::string& gpu_policy,
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
  // Node `id` changed since fitted (its version `now`): fitted again and
  // counted under its refusal now.
  auto refit = [&](size_t id, uint64_t now) {
    const bool counted = cache.version[id] != kUnfitted;
    uint32_t& held = cache.refusal[id];
    if (counted) --cache.count[held];  // counted before: taken back
    const auto fit = device_fit ? device_fit->fit(cluster.view(id), pod)
                                : core::fit_pod(cluster.view(id), pod, gpu_, scratch_);
    const core::Refusal& refusal = fit.fits ? kFits : fit.refusal;
    // Most refits find the node's refusal unchanged: compared before hashed.
    if (!counted || !(refusals_[held] == refusal)) held = intern(refusal);
    cache.version[id] = now;
    if (held >= cache.count.size()) cache.count.resize(held + 1, 0);
    ++cache.count[held];
  };
  if (cache.version.size() != cluster.size()) {
    cache = Shape{};
    cache.version.assign(cluster.size(), kUnfitted);
    cache.refusal.assign(cluster.size(), 0);
  }
  if (cache.seen < cluster.first_change() || cache.seen == 0) {
    // New, or behind what the cluster's change log keeps: every node.
    for (size_t id = 0; id < cluster.size(); ++id)
      if (const uint64_t now = cluster.version(id); cache.version[id] != now) refit(id, now);
  } else {
    // Only the nodes changed since the last call, each at its latest entry:
    // a scan of every node's version per refusal was most of this call.
    // A shape's versions are cold by its next call, and a refit between
    // two entries keeps the next entry's load from starting early: it is
    // asked for a few entries ahead.
    constexpr size_t kAhead = 8;
    const size_t end = cluster.change_count();
    for (size_t i = cache.seen; i < end; ++i) {
      if (i + kAhead < end) {
        const uint32_t ahead = cluster.changed_node(i + kAhead);
        __builtin_prefetch(&cache.version[ahead]);
        __builtin_prefetch(&cache.refusal[ahead]);
      }
      const uint32_t id = cluster.changed_node(i);
      if (cluster.changed_at(id) != i + 1) continue;
      if (const uint64_t now = cluster.version(id); cache.version[id] != now) refit(id, now);
    }
  }
  cache.seen = cluster.change_count();
  return cache;
}

}  // namespace gpuslice::sim
