#include "refusal_memo.hpp"

#include <unordered_map>

#include "gpuslice/core/request_shape.hpp"

namespace gpuslice::serve {

const RefusalMemo::Answer* RefusalMemo::find(const core::Cluster& cluster, uint64_t names_generation,
                                             const core::PodRequest& pod, const Refit& refit) {
  if (!valid_ || cluster.epoch() != epoch_ || names_generation != names_generation_ ||
      !core::same_shape(pod, pod_))
    return nullptr;
  const size_t now = cluster.change_count();
  if (now != change_count_) {
    // The log no longer reaches back to the last check, or too much changed.
    if (change_count_ < cluster.first_change() || now - change_count_ > kMaxRefits) {
      valid_ = false;
      return nullptr;
    }
    for (size_t i = change_count_; i < now; ++i) {
      const uint32_t id = cluster.changed_node(i);
      if (cluster.changed_at(id) != i + 1) continue;  // a later entry has this node
      if (refusal_of_[id] == kNotNamed) continue;
      const std::optional<core::Refusal> refusal = refit(id);
      if (!refusal || !(*refusal == refusals_[refusal_of_[id]])) {
        valid_ = false;
        return nullptr;
      }
    }
    change_count_ = now;
  }
  return &answer_;
}

void RefusalMemo::keep(const core::Cluster& cluster, uint64_t names_generation, const core::PodRequest& pod,
                       const core::Decision& decision, Answer answer) {
  epoch_ = cluster.epoch();
  names_generation_ = names_generation;
  change_count_ = cluster.change_count();
  pod_ = pod;
  refusals_.clear();
  refusal_of_.assign(cluster.size(), kNotNamed);
  std::unordered_multimap<uint64_t, uint32_t> by_hash;
  const core::Refusal* previous = nullptr;
  uint32_t previous_at = 0;
  for (const auto& [id, refusal] : decision.failed) {
    // Nodes in one state are mostly refused alike: compare before hashing.
    if (!previous || !(*previous == refusal)) {
      const uint64_t h = refusal.hash();
      previous_at = kNotNamed;
      for (auto [it, end] = by_hash.equal_range(h); it != end; ++it)
        if (refusals_[it->second] == refusal) previous_at = it->second;
      if (previous_at == kNotNamed) {
        previous_at = static_cast<uint32_t>(refusals_.size());
        refusals_.push_back(refusal);
        by_hash.emplace(h, previous_at);
      }
      previous = &refusal;
    }
    refusal_of_[id] = previous_at;
  }
  answer_ = std::move(answer);
  valid_ = true;
}

}  // namespace gpuslice::serve
