#include "gpuslice/defrag/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpuslice/core/place.hpp"

namespace gpuslice::defrag {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64's finaliser over the running value. A state is its 64-bit
  // hash to the search's table: among the millions of states a search may
  // visit, two distinct ones collide with odds of about 1 in 10^7.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

Replay::Replay(const Problem& problem)
    : problem_(problem), cluster_(problem.cluster), policy_(problem.make_policy()) {
  on_node_.resize(cluster_.size());
  places_.reserve(problem.pods.size());
  for (uint32_t i = 0; i < problem.pods.size(); ++i) {
    const auto& p = problem.pods[i];
    places_.push_back({p.node, p.allocation});
    on_node_[p.node].push_back(i);
    hash_ ^= place_hash(i, places_.back());
  }
  budget_used_.assign(problem.budgets.size(), 0);
  if (policy_->dialect() == core::Dialect::Hami && !policy_->device_fit()) {
    for (const auto& q : problem.quotas) quotas_.add(q);
    quotas_armed_ = quotas_.has_limits();
  }
  if (quotas_armed_) {
    for (const auto& p : problem.pods) quotas_.charge(p.request.ns, core::quota_use(p.allocation));
    scheduler_.set_quotas(&quotas_);
  }
  // A policy keeping state per node (reserve hooks) learns of the pods
  // already running, as the simulator tells it of a snapshot's pods.
  for (const auto& p : problem.pods) core::reserved(*policy_, cluster_.view(p.node), p.request, p.allocation);
}

uint64_t Replay::place_hash(uint32_t pod, const Place& place) const {
  uint64_t h = mix(pod, place.node);
  for (const auto& c : place.allocation.containers)
    for (const auto& g : c)
      h = mix(h, (static_cast<uint64_t>(g.device) << 40) ^ static_cast<uint64_t>(g.memory_mib) ^
                     (static_cast<uint64_t>(g.cores) << 32));
  return h;
}

bool Replay::may_move(uint32_t pod) const {
  const RunningPod& p = problem_.pods[pod];
  if (!p.movable()) return false;
  for (uint32_t b : p.budgets)
    if (budget_used_[b] >= problem_.budgets[b].allowed) return false;
  return true;
}

void Replay::charge(size_t node, const core::PodRequest& pod, const core::PodAllocation& allocation) {
  cluster_.charge(node, allocation, pod.host);
  if (quotas_armed_) quotas_.charge(pod.ns, core::quota_use(allocation));
  core::reserved(*policy_, cluster_.view(node), pod, allocation);
  check_node(node);
}

void Replay::release(size_t node, const core::PodRequest& pod, const core::PodAllocation& allocation) {
  cluster_.release(node, allocation, pod.host);
  if (quotas_armed_) quotas_.release(pod.ns, core::quota_use(allocation));
  core::unreserved(*policy_, cluster_.view(node), pod, allocation);
}

std::string Replay::quota_shortfall(const core::PodRequest& pod) const {
  return quotas_armed_ ? core::quota_shortfall(cluster_, quotas_, pod) : std::string();
}

void Replay::check_node(size_t node) const {
  const core::Node& n = cluster_.node(node);
  const auto use = cluster_.usage(node);
  for (size_t d = 0; d < n.devices.size(); ++d)
    if (use[d].slots > n.devices[d].slots || use[d].memory_mib > n.devices[d].memory_mib ||
        use[d].cores > n.devices[d].cores)
      throw std::logic_error(
          fmt::format("defrag replay: card {} of node '{}' holds {} slots, {} MiB, {}% cores of "
                      "{}, {} MiB, {}%",
                      n.devices[d].index, n.name, use[d].slots, use[d].memory_mib, use[d].cores,
                      n.devices[d].slots, n.devices[d].memory_mib, n.devices[d].cores));
}

void Replay::detach(uint32_t pod) {
  auto& list = on_node_[places_[pod].node];
  list.erase(std::find(list.begin(), list.end(), pod));
  hash_ ^= place_hash(pod, places_[pod]);
}

void Replay::attach(uint32_t pod) {
  auto& list = on_node_[places_[pod].node];
  list.insert(std::upper_bound(list.begin(), list.end(), pod), pod);
  hash_ ^= place_hash(pod, places_[pod]);
}

std::optional<Move> Replay::move(uint32_t pod) {
  if (!may_move(pod)) return std::nullopt;
  const RunningPod& p = problem_.pods[pod];
  Move m{pod, places_[pod], {}};
  release(m.from.node, p.request, m.from.allocation);
  const core::Decision d = scheduler_.place(cluster_, p.request, *policy_, core::Detail::Minimal);
  ++placements_;
  if (!d.placed()) {
    charge(m.from.node, p.request, m.from.allocation);
    return std::nullopt;
  }
  m.to = {*d.node, d.allocation};
  charge(m.to.node, p.request, m.to.allocation);
  detach(pod);
  places_[pod] = m.to;
  attach(pod);
  for (uint32_t b : p.budgets) ++budget_used_[b];
  moves_.push_back(m);
  return m;
}

void Replay::undo() {
  if (moves_.empty()) throw std::logic_error("defrag replay: undo with no move made");
  const Move m = std::move(moves_.back());
  moves_.pop_back();
  const RunningPod& p = problem_.pods[m.pod];
  release(m.to.node, p.request, m.to.allocation);
  charge(m.from.node, p.request, m.from.allocation);
  detach(m.pod);
  places_[m.pod] = m.from;
  attach(m.pod);
  for (uint32_t b : p.budgets) --budget_used_[b];
}

std::vector<Place> Replay::place_targets() {
  std::vector<Place> placed;
  for (const Target& t : problem_.targets) {
    const core::Decision d = scheduler_.place(cluster_, t.request, *policy_, core::Detail::Minimal);
    ++placements_;
    if (!d.placed()) break;
    charge(*d.node, t.request, d.allocation);
    placed.push_back({*d.node, d.allocation});
  }
  return placed;
}

void Replay::remove_targets(const std::vector<Place>& placed) {
  for (size_t i = placed.size(); i-- > 0;)
    release(placed[i].node, problem_.targets[i].request, placed[i].allocation);
}

}  // namespace gpuslice::defrag
