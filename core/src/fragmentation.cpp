#include "gpuslice/core/fragmentation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <tuple>

#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/request_shape.hpp"

namespace gpuslice::core {

namespace {

// What tells two typical pods apart (the artifact's PodResource: CPU, GPU
// share per card, card count, GPU type), with HAMi's per-card dimensions in
// place of the one share. Ordered as the artifact breaks frequency ties.
struct ShapeKey {
  int64_t cpu_milli = 0;
  int32_t cores = 0;
  int32_t memory_percent = 0;
  int64_t memory_mib = 0;
  int32_t count = 0;
  std::string types, nouse_types, vendor, vgpu_mode;
  auto tie() const {
    return std::tie(cpu_milli, cores, memory_percent, memory_mib, count, types, nouse_types, vendor,
                    vgpu_mode);
  }
  bool operator<(const ShapeKey& o) const { return tie() < o.tie(); }
};

ShapeKey shape_key(const PodRequest& pod) {
  ShapeKey k;
  k.cpu_milli = pod.host.cpu_milli;
  const auto& s = pod.selectors;
  k.types = fmt::format("{}", fmt::join(s.use_types, "|"));
  if (const ContainerRequest* c = pod.first_device_container()) {
    k.cores = c->cores;
    k.memory_percent = c->memory_percent;
    k.memory_mib = c->memory_mib;
    k.count = c->count;
    k.nouse_types = fmt::format("{}", fmt::join(s.nouse_types, "|"));
    k.vendor = c->vendor;
    k.vgpu_mode = s.vgpu_mode;
  }
  return k;
}

// Set bits, inline: std::popcount calls into libgcc on a build without
// -mpopcnt, and the fragment loop counts once per typical pod and state.
inline int count_bits(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// The study checks a typical pod against a node's CPU only.
bool host_cpu_has_room(const Node& node, const HostResources& used, const HostResources& want) {
  const auto& cap = node.capacity;
  return cap.cpu_milli <= 0 || used.cpu_milli + want.cpu_milli <= cap.cpu_milli;
}

}  // namespace

std::vector<TypicalPod> typical_pods(std::span<const PodRequest> pods, double coverage) {
  return typical_pods(
      pods.size(), [&](size_t i) -> const PodRequest& { return pods[i]; }, coverage);
}

std::vector<TypicalPod> typical_pods(size_t count, const std::function<const PodRequest&(size_t)>& pod_at,
                                     double coverage) {
  // Request shapes first (a hash each), then the study's coarser key once
  // per request shape: building that key per pod would cost more.
  RequestShapes requests;
  std::vector<std::pair<size_t, size_t>> per_request;  // request shape -> (first pod, count)
  for (size_t i = 0; i < count; ++i) {
    const uint32_t id = requests.id(pod_at(i));
    if (id == per_request.size()) per_request.emplace_back(i, 0);
    ++per_request[id].second;
  }
  std::map<ShapeKey, std::pair<size_t, size_t>> by_shape;  // key -> (first pod, count)
  for (const auto& [first, n] : per_request) {
    auto [it, fresh] = by_shape.try_emplace(shape_key(pod_at(first)), first, 0);
    it->second.first = std::min(it->second.first, first);
    it->second.second += n;
  }
  std::vector<std::pair<const ShapeKey*, std::pair<size_t, size_t>>> shapes;
  for (const auto& [key, v] : by_shape) shapes.emplace_back(&key, v);
  // Most frequent first; among equals the larger shape (sort.Reverse of the
  // artifact's TargetPodList.Less).
  std::sort(shapes.begin(), shapes.end(), [](const auto& a, const auto& b) {
    return a.second.second != b.second.second ? a.second.second > b.second.second : *b.first < *a.first;
  });
  std::vector<TypicalPod> out;
  size_t covered = 0;
  for (const auto& [key, v] : shapes) {
    if (static_cast<double>(covered) >= coverage * static_cast<double>(count)) break;
    out.push_back({pod_at(v.first), static_cast<double>(v.second)});
    covered += v.second;
  }
  for (auto& t : out) t.weight /= static_cast<double>(covered);
  return out;
}

int64_t card_free_milli(const Device& device, const DeviceUsage& used) {
  // A card closed while a pod's MIG reservations cannot be read is as
  // unhealthy as HAMi marks it.
  if (!device.healthy || used.closed_by > 0 || used.slots >= device.slots) return 0;
  int64_t free = 1000;
  if (device.cores > 0)
    free = std::min(free, 1000 * std::max<int64_t>(0, device.cores - used.cores) / device.cores);
  if (device.memory_mib > 0)
    free =
        std::min(free, 1000 * std::max<int64_t>(0, device.memory_mib - used.memory_mib) / device.memory_mib);
  if (device.cores <= 0 && device.memory_mib <= 0) return 0;
  return free;
}

FragmentationModel::FragmentationModel(std::vector<TypicalPod> typical) : typical_(std::move(typical)) {
  // CPU-only typical pods count every free GPU as fragment whatever the
  // node (the artifact's XL/XR classes): one weight for all of them.
  for (const auto& t : typical_)
    if (!t.pod.first_device_container()) cpu_only_weight_ += t.weight;
  std::erase_if(typical_, [](const TypicalPod& t) { return !t.pod.first_device_container(); });
  // card_has_room reads memory, memory percent and cores of the demand.
  for (const auto& t : typical_) {
    const ContainerRequest* want = t.pod.first_device_container();
    size_t k = 0;
    while (k < demands_.size() &&
           !(demands_[k].memory_mib == want->memory_mib &&
             demands_[k].memory_percent == want->memory_percent && demands_[k].cores == want->cores))
      ++k;
    if (k == demands_.size()) demands_.push_back(*want);
    demand_of_.push_back(static_cast<uint32_t>(k));
    count_of_.push_back(want->count);
  }
}

const FragmentationModel::ShapeFacts& FragmentationModel::facts(const NodeView& node) {
  const uint32_t shape = node.shape;
  if (facts_by_shape_.size() <= shape) facts_by_shape_.resize(shape + 1);
  auto& f = facts_by_shape_[shape];
  const Node& n = *node.node;
  if (f.admitted.empty() && !typical_.empty()) {
    f.admitted.assign(typical_.size(), 0);
    for (size_t t = 0; t < typical_.size(); ++t)
      for (size_t d = 0; d < n.devices.size() && d < 64; ++d)
        if (card_admits(n, d, typical_[t].pod, *typical_[t].pod.first_device_container()))
          f.admitted[t] |= uint64_t{1} << d;
    f.memreq.resize(demands_.size() * n.devices.size());
    for (size_t k = 0; k < demands_.size(); ++k)
      for (size_t d = 0; d < n.devices.size(); ++d)
        f.memreq[k * n.devices.size() + d] = demands_[k].memory_on(n.devices[d].memory_mib);
    for (size_t d = 0; d < n.devices.size() && d < 64; ++d)
      if (n.devices[d].is_mig()) f.mig_cards |= uint64_t{1} << d;
  }
  return f;
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
  if (memo_.empty()) memo_.resize(kMemoSlots);
  MemoEntry& slot = memo_[h.a & (kMemoSlots - 1)];
  // An all-zero slot is empty; the (vanishingly unlikely) all-zero hash is never kept.
  if (slot.a == h.a && slot.b == h.b && (h.a | h.b) != 0) return slot.fragment;
  const double fragment = compute(node, usage, host_used);
  slot = {h.a, h.b, fragment};
  return fragment;
}

namespace {
// Instances the usable cards give a demand when some of them are MIG-mode
// cards: one per card, but a MIG-mode card as many as its free slices hold
// (HAMi's Fit packs a multi-card request on one MIG card). Out of line: the
// look-ahead's loop calls it only on such nodes.
[[gnu::noinline]] int mig_instances_on(const Node& n, std::span<const DeviceUsage> usage, uint64_t usable,
                                       const int64_t* memreq) {
  int count = 0;
  for (uint64_t bits = usable; bits; bits &= bits - 1) {
    const auto d = static_cast<size_t>(std::countr_zero(bits));
    count += n.devices[d].is_mig() ? mig_instance_count(n.devices[d], usage[d], memreq[d]) : 1;
  }
  return count;
}
}  // namespace

double FragmentationModel::compute(const NodeView& node, std::span<const DeviceUsage> usage,
                                   const HostResources& host_used) {
  const Node& n = *node.node;
  const size_t cards = n.devices.size();
  constexpr size_t kMaxCards = 64;
  if (cards > kMaxCards) return 0;  // no such node in practice; keeps the buffer fixed
  int64_t free[kMaxCards];
  int64_t free_total = 0;
  uint64_t closed = 0;
  for (size_t d = 0; d < cards; ++d) {
    free_total += (free[d] = card_free_milli(n.devices[d], usage[d]));
    if (usage[d].closed_by > 0) closed |= uint64_t{1} << d;
  }
  if (free_total == 0) return 0;
  const ShapeFacts& f = facts(node);
  double fragment = cpu_only_weight_ * static_cast<double>(free_total);
  constexpr size_t kMaxDemands = 64;
  uint64_t room_small[kMaxDemands];
  std::vector<uint64_t> room_big;
  uint64_t* room = room_small;
  if (demands_.size() > kMaxDemands) {
    room_big.resize(demands_.size());
    room = room_big.data();
  }
  // The loops read the model through locals: the out-of-line MIG calls in
  // them would otherwise make the compiler reload every vector's data
  // pointer per iteration (a quarter more instructions in the look-ahead).
  const size_t demand_count = demands_.size();
  const ContainerRequest* demands = demands_.data();
  const int64_t* memreqs = f.memreq.data();
  const uint64_t mig_cards = f.mig_cards;
  for (size_t k = 0; k < demand_count; ++k) {
    uint64_t bits = 0;
    const int32_t cores = std::min<int32_t>(demands[k].cores, 100);
    const int64_t* memreq = memreqs + k * cards;
    // card_has_room, its per-card checks hoisted: closed cards masked once,
    // the MIG profile search only on the shape's MIG-mode cards.
    for (size_t d = 0; d < cards; ++d)
      if (!capacity_check(n.devices[d], usage[d], cores, memreq[d], false)) bits |= uint64_t{1} << d;
    bits &= ~closed;
    for (uint64_t mig = bits & mig_cards; mig; mig &= mig - 1) {
      const auto d = static_cast<size_t>(std::countr_zero(mig));
      if (!mig_has_room(n.devices[d], usage[d], memreq[d])) bits &= ~(uint64_t{1} << d);
    }
    room[k] = bits;
  }
  const size_t typical_count = typical_.size();
  const TypicalPod* typical = typical_.data();
  const uint32_t* demand_of = demand_of_.data();
  const int32_t* count_of = count_of_.data();
  const uint64_t* admitted = f.admitted.data();
  for (size_t t = 0; t < typical_count; ++t) {
    const uint64_t usable = room[demand_of[t]] & admitted[t];
    int instances = count_bits(usable);
    if (instances < count_of[t] && (usable & mig_cards) != 0)
      instances = mig_instances_on(n, usage, usable, memreqs + demand_of[t] * cards);
    const bool fits = instances >= count_of[t] && host_cpu_has_room(n, host_used, typical[t].pod.host);
    int64_t unusable = free_total;
    if (fits)
      for (uint64_t bits = usable; bits; bits &= bits - 1)
        unusable -= free[static_cast<size_t>(std::countr_zero(bits))];
    fragment += typical[t].weight * static_cast<double>(unusable);
  }
  return fragment;
}

}  // namespace gpuslice::core
