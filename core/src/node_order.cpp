#include "gpuslice/core/node_order.hpp"

namespace gpuslice::core {

void NodeOrderIndex::sync(const Cluster& cluster, const Policy& policy) {
  if (cluster_ != &cluster || policy_ != &policy || epoch_ != cluster.epoch() || key_.size() != cluster.size() ||
      seen_changes_ > cluster.change_count()) {
    rebuild(cluster, policy);
    return;
  }
  for (; seen_changes_ < cluster.change_count(); ++seen_changes_)
    update(cluster, policy, cluster.changed_node(seen_changes_));
}

void NodeOrderIndex::rebuild(const Cluster& cluster, const Policy& policy) {
  cluster_ = &cluster;
  policy_ = &policy;
  epoch_ = cluster.epoch();
  seen_changes_ = cluster.change_count();
  key_.resize(cluster.size());
  descending_.clear();
  ascending_.clear();
  for (size_t id = 0; id < cluster.size(); ++id) {
    key_[id] = policy.node_key(cluster.view(id));
    descending_.emplace(key_[id], static_cast<uint32_t>(id));
    ascending_.emplace(key_[id], static_cast<uint32_t>(id));
  }
}

void NodeOrderIndex::update(const Cluster& cluster, const Policy& policy, uint32_t id) {
  const double key = policy.node_key(cluster.view(id));
  if (key == key_[id]) return;
  descending_.erase({key_[id], id});
  ascending_.erase({key_[id], id});
  key_[id] = key;
  descending_.emplace(key, id);
  ascending_.emplace(key, id);
}

}  // namespace gpuslice::core
