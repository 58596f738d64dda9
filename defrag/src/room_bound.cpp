#include "gpuslice/defrag/room_bound.hpp"

#include <algorithm>

namespace gpuslice::defrag {

namespace {

// Subsets of a node's movable pods tried per size before the distance is
// left at "at least this size" (a weaker bound, still a true one): a node
// of 8 cards x 10 slices could hold 80 pods.
constexpr size_t kSubsetsPerSize = 4096;

size_t choose(size_t n, size_t k) {
  if (k > n) return 0;
  size_t r = 1;
  for (size_t i = 1; i <= k; ++i) {
    r = r * (n - k + i) / i;
    if (r > (size_t{1} << 40)) return r;
  }
  return r;
}

// Calls visit(indices) for each k-subset of [0, n) in lexicographic order
// until it returns false.
template <typename F>
void for_each_subset(size_t n, size_t k, std::vector<uint32_t>& idx, F visit) {
  idx.resize(k);
  for (size_t i = 0; i < k; ++i) idx[i] = static_cast<uint32_t>(i);
  for (;;) {
    if (!visit(idx)) return;
    size_t i = k;
    while (i > 0 && idx[i - 1] == n - k + i - 1) --i;
    if (i == 0) return;
    ++idx[i - 1];
    for (size_t j = i; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
}

}  // namespace

bool monotone_fit(const core::PodRequest& pod) {
  size_t asking = 0;
  for (size_t i = 0; i < pod.container_count(); ++i) asking += pod.container_at(i).wants_devices() ? 1 : 0;
  return asking <= 1;
}

RoomBound::RoomBound(const Replay& replay, const core::PodRequest& target, int cap)
    : replay_(replay),
      target_(target),
      gpu_policy_(core::GpuPolicy::parse(replay.policy().gpu_policy_for(target))) {
  const size_t n = replay.cluster().size();
  at_.assign(n, 0);
  cap_.assign(n, -1);
  can_reach_.assign(n, 0);
  count_.assign(1, n);  // every node at 0 until stored
  for (size_t node = 0; node < n; ++node) update(node, cap);
}

int RoomBound::bound() const {
  for (size_t k = 0; k < count_.size(); ++k)
    if (count_[k] > 0) return static_cast<int>(k);
  return static_cast<int>(count_.size());
}

void RoomBound::store(size_t node, int value, int cap) {
  --count_[static_cast<size_t>(at_[node])];
  if (count_.size() <= static_cast<size_t>(value)) count_.resize(static_cast<size_t>(value) + 1, 0);
  ++count_[static_cast<size_t>(value)];
  at_[node] = value;
  cap_[node] = cap;
}

void RoomBound::update(size_t node, int cap) {
  movable_.clear();
  for (uint32_t pod : replay_.pods_on(node))
    if (replay_.may_move(pod)) movable_.push_back(pod);
  reachable_ -= can_reach_[node];
  can_reach_[node] = fits_without(node, movable_) ? 1 : 0;
  reachable_ += can_reach_[node];
  store(node, can_reach_[node] ? distance(node, 0, cap) : cap + 1, cap);
}

void RoomBound::raise_cap(int cap) {
  for (size_t node = 0; node < at_.size(); ++node) {
    if (cap_[node] >= cap) continue;
    if (at_[node] <= cap_[node] || !can_reach_[node]) {  // exact already, or never
      cap_[node] = cap;
      if (!can_reach_[node]) store(node, cap + 1, cap);
      continue;
    }
    movable_.clear();
    for (uint32_t pod : replay_.pods_on(node))
      if (replay_.may_move(pod)) movable_.push_back(pod);
    store(node, distance(node, cap_[node] + 1, cap), cap);
  }
}

bool RoomBound::fits_without(size_t node, std::span<const uint32_t> leaving) {
  const core::Cluster& cluster = replay_.cluster();
  const auto use = cluster.usage(node);
  usage_.assign(use.begin(), use.end());
  core::NodeView view = cluster.view(node);
  for (uint32_t pod : leaving) {
    for (const auto& c : core::effective_charges(replay_.place_of(pod).allocation)) {
      auto& u = usage_[static_cast<size_t>(c.device)];
      u.slots -= c.usage.slots;
      u.memory_mib -= c.usage.memory_mib;
      u.cores -= c.usage.cores;
    }
    view.host_used.cpu_milli -= replay_.problem().pods[pod].request.host.cpu_milli;
    view.host_used.memory_mib -= replay_.problem().pods[pod].request.host.memory_mib;
  }
  view.usage = usage_;
  return core::fit_pod(view, target_, gpu_policy_, scratch_).fits;
}

// The node's movable pods are in movable_ and the target fits with all of
// them gone; sizes below `from` are known not to suffice.
int RoomBound::distance(size_t node, int from, int cap) {
  const size_t m = movable_.size();
  for (size_t k = static_cast<size_t>(from); k <= static_cast<size_t>(cap); ++k) {
    if (k >= m) return static_cast<int>(m);                          // all of them: known to fit
    if (choose(m, k) > kSubsetsPerSize) return static_cast<int>(k);  // at least k (sizes below refuted)
    bool found = false;
    for_each_subset(m, k, chosen_, [&](const std::vector<uint32_t>& idx) {
      leaving_.clear();
      for (uint32_t i : idx) leaving_.push_back(movable_[i]);
      found = fits_without(node, leaving_);
      return !found;
    });
    if (found) return static_cast<int>(k);
  }
  return cap + 1;
}

std::vector<std::vector<uint32_t>> RoomBound::removal_sets(size_t node, int size, size_t limit) {
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> pods;
  for (uint32_t pod : replay_.pods_on(node))
    if (replay_.may_move(pod)) pods.push_back(pod);
  if (size < 0 || static_cast<size_t>(size) > pods.size()) return out;
  size_t tried = 0;
  std::vector<uint32_t> idx, leaving;
  for_each_subset(pods.size(), static_cast<size_t>(size), idx, [&](const std::vector<uint32_t>& chosen) {
    leaving.clear();
    for (uint32_t i : chosen) leaving.push_back(pods[i]);
    if (fits_without(node, leaving)) out.push_back(leaving);
    return out.size() < limit && ++tried < kSubsetsPerSize * 4;
  });
  return out;
}

}  // namespace gpuslice::defrag
