// The scheduler's caches between placements (scheduler_caches.hpp).
#include "scheduler_caches.hpp"

#include <algorithm>

#include "gpuslice/core/place.hpp"

namespace gpuslice::core {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

uint64_t state_hash(const Cluster& cluster, size_t id) {
  uint64_t h = mix(cluster.shape(id), static_cast<uint64_t>(cluster.host_used(id).cpu_milli));
  h = mix(h, static_cast<uint64_t>(cluster.host_used(id).memory_mib));
  for (const auto& u : cluster.usage(id)) {
    h = mix(h, static_cast<uint64_t>(u.slots));
    h = mix(h, static_cast<uint64_t>(u.memory_mib));
    h = mix(h, static_cast<uint64_t>(u.cores));
  }
  return h;
}

}  // namespace

int64_t Scheduler::Caches::largest_card_mib(const Cluster& cluster) {
  if (largest_card_epoch_ != cluster.epoch()) {
    largest_card_mib_ = core::largest_card_mib(cluster);
    largest_card_epoch_ = cluster.epoch();
  }
  return largest_card_mib_;
}

void Scheduler::Caches::arm_quota(const QuotaBook* quotas, const Cluster& cluster, const PodRequest& pod) {
  quota_ = nullptr;
  if (!quotas || !quotas->has_limits()) return;
  headroom_ = quotas->headroom(pod.ns);
  if (!headroom_) return;
  // Armed only when the most the pod could count on any node passes it.
  if (!headroom_->admits(most_quota_use(pod, largest_card_mib(cluster)))) quota_ = &*headroom_;
}

void Scheduler::Caches::clear_seen_states(const Cluster& cluster) {
  size_t want = 16;
  while (want < 2 * cluster.size()) want *= 2;  // at most half full
  if (seen_states_.size() != want) {
    seen_states_.assign(want, {});
    seen_stamp_ = 0;
  }
  if (++seen_stamp_ == 0) {
    std::fill(seen_states_.begin(), seen_states_.end(), SeenState{});
    std::fill(refused_at_.begin(), refused_at_.end(), std::pair<uint32_t, uint32_t>{});
    seen_stamp_ = 1;
  }
}

size_t Scheduler::Caches::first_with_state(const Cluster& cluster, size_t id, const Policy& policy) {
  uint64_t key = 0;
  if (policy.traits().keys_node_state) {
    const auto own = policy.node_state_key(id);
    if (!own) return id;  // the policy cannot tell: a state of its own
    key = *own;
  }
  if (state_epoch_ != cluster.epoch() || state_hash_.size() != cluster.size()) {
    state_epoch_ = cluster.epoch();
    state_hash_.assign(cluster.size(), {UINT64_MAX, 0});
    verified_same_.assign(cluster.size(), {});
  }
  auto& cached = state_hash_[id];
  if (cached.first != cluster.version(id)) cached = {cluster.version(id), state_hash(cluster, id)};
  const uint64_t hash = mix(cached.second, key);
  const size_t mask = seen_states_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    SeenState& e = seen_states_[slot];
    if (e.stamp != seen_stamp_) {
      e = {hash, key, static_cast<uint32_t>(id), seen_stamp_};
      return id;
    }
    // Equal hashes are checked: a collision is a state of its own. A check
    // holds while neither node changes: a filter naming 10,000 unchanged
    // nodes again compares versions, not every card's usage.
    if (e.hash == hash && e.key == key) {
      VerifiedSame& v = verified_same_[id];
      const VerifiedSame now{e.node, cluster.version(e.node), cluster.version(id)};
      if (v == now) return e.node;
      if (cluster.same_state(e.node, id)) {
        v = now;
        return e.node;
      }
    }
  }
}

Scheduler::Caches::ShapeScores& Scheduler::Caches::shape_scores(const Cluster& cluster, const Policy& policy,
                                                                size_t shape) {
  // Kept while the cluster (epoch) and the policy stay the same.
  if (score_epoch_ != cluster.epoch() || score_policy_ != &policy) {
    score_cache_.clear();
    score_epoch_ = cluster.epoch();
    score_policy_ = &policy;
  }
  // Bounded memory: about 32 bytes per (shape, node); start over past 16M.
  if (!score_cache_.count(shape) && (score_cache_.size() + 1) * cluster.size() > (size_t{1} << 24))
    score_cache_.clear();
  return score_cache_[shape];
}

std::span<const uint32_t> Scheduler::Caches::name_ranks(const Cluster& cluster) {
  if (name_epoch_ != cluster.epoch() || name_rank_.size() != cluster.size()) {
    std::vector<uint32_t> ids(cluster.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i);
    std::sort(ids.begin(), ids.end(),
              [&](uint32_t a, uint32_t b) { return cluster.node(a).name < cluster.node(b).name; });
    name_rank_.assign(cluster.size(), 0);
    for (size_t r = 0; r < ids.size(); ++r) name_rank_[ids[r]] = static_cast<uint32_t>(r);
    name_order_ = std::move(ids);
    name_epoch_ = cluster.epoch();
  }
  return name_rank_;
}

}  // namespace gpuslice::core
