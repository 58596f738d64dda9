#include "gpuslice/core/fragmentation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core {

namespace {

std::string shape_key(const PodRequest& pod, const ContainerRequest& c) {
  const auto& s = pod.selectors;
  return fmt::format("{}/{}/{}/{}/{}|{}/{}|{}|{}|{}", c.count, c.memory_mib, c.memory_percent, c.cores,
                     c.vendor, pod.host.cpu_milli, pod.host.memory_mib, fmt::join(s.use_types, ","),
                     fmt::join(s.nouse_types, ","), s.vgpu_mode);
}

bool host_has_room(const Node& node, const HostResources& used, const HostResources& want) {
  const auto& cap = node.capacity;
  if (cap.cpu_milli > 0 && used.cpu_milli + want.cpu_milli > cap.cpu_milli) return false;
  if (cap.memory_mib > 0 && used.memory_mib + want.memory_mib > cap.memory_mib) return false;
  return true;
}

}  // namespace

std::vector<TypicalPod> typical_pods(std::span<const PodRequest> pods, double coverage) {
  return typical_pods(
      pods.size(), [&](size_t i) -> const PodRequest& { return pods[i]; }, coverage);
}

std::vector<TypicalPod> typical_pods(size_t count, const std::function<const PodRequest&(size_t)>& pod_at,
                                     double coverage) {
  std::map<std::string, std::pair<size_t, size_t>> by_shape;  // key -> (first pod, count)
  size_t gpu_pods = 0;
  for (size_t i = 0; i < count; ++i) {
    const PodRequest& pod = pod_at(i);
    const ContainerRequest* c = pod.first_device_container();
    if (!c) continue;
    ++gpu_pods;
    auto [it, fresh] = by_shape.try_emplace(shape_key(pod, *c), i, 0);
    ++it->second.second;
  }
  std::vector<std::pair<size_t, size_t>> shapes;
  for (const auto& [key, v] : by_shape) shapes.push_back(v);
  // Most frequent first; among equals, the one seen first (stable, seedless).
  std::sort(shapes.begin(), shapes.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<TypicalPod> out;
  size_t covered = 0;
  for (const auto& [first, seen] : shapes) {
    if (static_cast<double>(covered) >= coverage * static_cast<double>(gpu_pods)) break;
    out.push_back({pod_at(first), static_cast<double>(seen)});
    covered += seen;
  }
  for (auto& t : out) t.weight /= static_cast<double>(covered);
  return out;
}

int64_t card_free_milli(const Device& device, const DeviceUsage& used) {
  if (!device.healthy || device.cores <= 0) return 0;
  return 1000 * std::max<int64_t>(0, device.cores - used.cores) / device.cores;
}

FragmentationModel::FragmentationModel(std::vector<TypicalPod> typical) : typical_(std::move(typical)) {
  std::erase_if(typical_, [](const TypicalPod& t) { return !t.pod.first_device_container(); });
}

const std::vector<uint8_t>& FragmentationModel::admitted(const NodeView& node) {
  const uint32_t shape = node.shape;
  if (admitted_by_shape_.size() <= shape) admitted_by_shape_.resize(shape + 1);
  auto& mask = admitted_by_shape_[shape];
  const Node& n = *node.node;
  if (mask.empty() && !typical_.empty() && !n.devices.empty()) {
    mask.resize(typical_.size() * n.devices.size());
    for (size_t t = 0; t < typical_.size(); ++t)
      for (size_t d = 0; d < n.devices.size(); ++d)
        mask[t * n.devices.size() + d] =
            card_admits(n, d, typical_[t].pod, *typical_[t].pod.first_device_container());
  }
  return mask;
}

double FragmentationModel::node_fragment(const NodeView& node) {
  return node_fragment(node, node.usage, node.host_used);
}

namespace {
struct StateHash {
  uint64_t a = 0x243f6a8885a308d3ULL, b = 0x13198a2e03707344ULL;
  void add(uint64_t v) {
    a = (a ^ v) * 0x100000001b3ULL;
    a ^= a >> 29;
    b = (b + v + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
    b ^= b >> 31;
  }
};
}  // namespace

double FragmentationModel::node_fragment(const NodeView& node, std::span<const DeviceUsage> usage,
                                         const HostResources& host_used) {
  StateHash h;
  h.add(node.shape);
  h.add(static_cast<uint64_t>(host_used.cpu_milli));
  h.add(static_cast<uint64_t>(host_used.memory_mib));
  for (const auto& u : usage) {
    h.add(static_cast<uint64_t>(u.slots));
    h.add(static_cast<uint64_t>(u.memory_mib));
    h.add(static_cast<uint64_t>(u.cores));
  }
  if (auto it = memo_.find(h.a); it != memo_.end() && it->second.first == h.b) return it->second.second;
  const double fragment = compute(node, usage, host_used);
  if (memo_.size() >= kMemoLimit) memo_.clear();
  memo_[h.a] = {h.b, fragment};
  return fragment;
}

double FragmentationModel::compute(const NodeView& node, std::span<const DeviceUsage> usage,
                                   const HostResources& host_used) {
  const Node& n = *node.node;
  const size_t cards = n.devices.size();
  constexpr size_t kMaxCards = 64;
  if (cards > kMaxCards) return 0;  // no such node in practice; keeps the buffer fixed
  int64_t free[kMaxCards];
  int64_t free_total = 0;
  for (size_t d = 0; d < cards; ++d) free_total += (free[d] = card_free_milli(n.devices[d], usage[d]));
  if (free_total == 0) return 0;
  const auto& mask = admitted(node);
  double fragment = 0;
  for (size_t t = 0; t < typical_.size(); ++t) {
    const auto& pod = typical_[t].pod;
    const ContainerRequest& want = *pod.first_device_container();
    int64_t unusable = 0;
    int with_room = 0;
    for (size_t d = 0; d < cards; ++d) {
      if (mask[t * cards + d] && card_has_room(n.devices[d], usage[d], want))
        ++with_room;
      else
        unusable += free[d];
    }
    const bool fits = with_room >= want.count && host_has_room(n, host_used, pod.host);
    fragment += typical_[t].weight * static_cast<double>(fits ? unusable : free_total);
  }
  return fragment;
}

}  // namespace gpuslice::core
