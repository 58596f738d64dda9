#include "gpuslice/sim/refusal_explainer.hpp"

#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/reasons.hpp"

namespace gpuslice::sim {

uint32_t RefusalExplainer::intern(const std::string& formatted) {
  auto [it, fresh] = reason_ids_.try_emplace(formatted, static_cast<uint32_t>(reason_names_.size()));
  if (fresh) reason_names_.push_back(core::parse_reason_names(formatted));
  return it->second;
}

std::map<std::string, size_t> RefusalExplainer::reasons(const core::Cluster& cluster, size_t shape,
                                                        const core::PodRequest& pod,
                                                        const std::string& gpu_policy) {
  if (epoch_ != cluster.epoch()) {
    by_shape_.clear();
    epoch_ = cluster.epoch();
  }
  auto& cache = by_shape_[shape];
  cache.resize(cluster.size());
  const core::GpuPolicy gpu = core::GpuPolicy::parse(gpu_policy);
  std::vector<size_t> count(reason_names_.size() + 8, 0);
  for (size_t id = 0; id < cluster.size(); ++id) {
    auto& c = cache[id];
    if (c.version != cluster.version(id)) {
      const auto fit = core::fit_pod(cluster.view(id), pod, gpu, scratch_);
      c = {cluster.version(id), fit.fits ? intern("") : intern(fit.reason)};
    }
    if (c.reason >= count.size()) count.resize(c.reason + 1, 0);
    ++count[c.reason];
  }
  std::map<std::string, size_t> by_name;
  for (size_t r = 0; r < count.size(); ++r)
    if (count[r] > 0)
      for (const auto& name : reason_names_[r]) by_name[name] += count[r];
  return by_name;
}

}  // namespace gpuslice::sim
