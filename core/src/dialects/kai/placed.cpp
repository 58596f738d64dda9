// KAI's placed pods, as its scheduler's cache holds them (api/node_info,
// gpu_sharing): a bound pod on a KAI node holds its GPU groups' card (its
// runai-gpu-group labels; a reservation pod in kai-resource-reservation
// holds each group's card, run.ai/reserve_for_gpu_index naming it), or the
// whole GPUs it asks. A node's pods are placed once all its groups are known.
#include "dialects/kai/placed.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "gpuslice/core/dialects/kai/codec.hpp"
#include "gpuslice/core/dialects/kai/policy.hpp"

namespace gpuslice::core::dialects {

namespace {

// KAI's pods of one node, placed once every group of the node is known.
struct KaiNodePods {
  std::map<std::string, std::string> reserved;  // group -> run.ai/reserve_for_gpu_index
  std::set<std::string> groups;
  std::vector<size_t> shared, whole;  // indices into the output, in document order
};

void place_kai_pods(const Cluster& cluster, size_t id, const KaiNodePods& pods,
                    const std::vector<codec::PodDocument>& docs, std::vector<PlacedPod>& out,
                    const std::string& source, std::vector<std::string>& warnings, KaiGroups* kai_groups) {
  const Node& node = cluster.node(id);
  std::map<std::string, int> card_of;
  std::set<int> taken;
  for (const auto& [group, annotation] : pods.reserved) {
    const auto card = codec::kai_reserved_card(node, annotation);
    if (!card || taken.count(*card)) continue;
    card_of[group] = *card;
    taken.insert(*card);
  }
  // Groups whose card no reservation names take the lowest free cards, in
  // name order (KAI does not know the card; the device plugin does).
  auto next_free = [&]() -> std::optional<int> {
    for (size_t i = 0; i < node.devices.size(); ++i)
      if (node.devices[i].healthy && !taken.count(static_cast<int>(i))) return static_cast<int>(i);
    return std::nullopt;
  };
  for (const auto& group : pods.groups) {
    if (card_of.count(group)) continue;
    const auto card = next_free();
    if (!card) {
      warnings.push_back(fmt::format("{}: node '{}' has more GPU groups than free GPUs: group {} not counted",
                                     source, node.name, group));
      continue;
    }
    card_of[group] = *card;
    taken.insert(*card);
  }
  if (kai_groups)
    for (const auto& [group, card] : card_of) (*kai_groups)[id][card] = group;
  const int64_t gpu_memory = kai_gpu_memory(node);
  for (size_t i : pods.shared) {
    PlacedPod& p = out[i];
    const PodRequest& request = docs[p.doc].request;
    const KaiRequirement r = kai_requirement(request);
    const int64_t memory = kai_memory_per_device(r, gpu_memory);
    p.allocation.containers.assign(request.container_count(), {});
    p.allocation.init_count = request.init_containers.size();
    for (const auto& group : codec::kai_groups_of(docs[p.doc].meta.labels))
      if (auto it = card_of.find(group); it != card_of.end())
        p.allocation.containers[request.first_device_index()].push_back(
            DeviceGrant{it->second, memory, 0, kRatioFromMemory, 0});
  }
  for (size_t i : pods.whole) {
    PlacedPod& p = out[i];
    const PodRequest& request = docs[p.doc].request;
    p.allocation.containers.assign(request.container_count(), {});
    p.allocation.init_count = request.init_containers.size();
    const ContainerRequest* c = request.first_device_container();
    for (int n = 0; n < c->count; ++n) {
      const auto card = next_free();
      if (!card) {
        warnings.push_back(
            fmt::format("{}:{}: pod '{}' asks more whole GPUs than node '{}' has free: not all counted",
                        source, docs[p.doc].line, docs[p.doc].request.name, node.name));
        break;
      }
      taken.insert(*card);
      const Device& d = node.devices[static_cast<size_t>(*card)];
      p.allocation.containers[request.first_device_index()].push_back(
          DeviceGrant{*card, d.memory_mib, d.cores, kRatioFromMemory, 0});
    }
  }
}

class KaiPlacedReading final : public PlacedReading {
 public:
  explicit KaiPlacedReading(PlacedContext& c) : c_(c) {}

  bool claims(const codec::PodDocument&, std::optional<size_t> bound) const override {
    return bound && c_.cluster.node(*bound).cards_from == Dialect::Kai;
  }

  void read(size_t i) override {
    PlacedPod& p = c_.out[i];
    const codec::PodDocument& doc = c_.docs[p.doc];
    const auto groups = codec::kai_groups_of(doc.meta.labels);
    KaiNodePods& pods = by_node_[p.node];
    if (doc.request.ns == codec::kKaiReservationNamespace && !groups.empty()) {
      p.role = PlacedRole::KaiReservation;
      pods.groups.insert(groups.front());
      if (!doc.kai_reserved_gpu.empty()) pods.reserved[groups.front()] = doc.kai_reserved_gpu;
      return;
    }
    const KaiRequirement r = kai_requirement(doc.request);
    if (r.shared() && !groups.empty()) {
      p.role = PlacedRole::Kai;
      pods.groups.insert(groups.begin(), groups.end());
      pods.shared.push_back(i);
    } else if (r.kind == KaiRequirement::Kind::Regular) {
      p.role = PlacedRole::Kai;
      pods.whole.push_back(i);
    }
  }

  void finish() override {
    for (const auto& [id, pods] : by_node_)
      place_kai_pods(c_.cluster, id, pods, c_.docs, c_.out, c_.source, c_.warnings, c_.gpu_groups);
  }

 private:
  PlacedContext& c_;
  std::map<size_t, KaiNodePods> by_node_;
};

}  // namespace

std::unique_ptr<PlacedReading> kai_placed_reading(PlacedContext& context) {
  return std::make_unique<KaiPlacedReading>(context);
}

}  // namespace gpuslice::core::dialects
