#include "gpuslice/core/placed_pods.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/codec/kai.hpp"
#include "gpuslice/core/codec/koordinator.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policies/kai.hpp"
#include "dialects/hami/placed_mig.hpp"

namespace gpuslice::core {

namespace {

// HAMi's own pods: hami.io/vgpu-node and the grants of vgpu-devices-allocated.
void read_hami(const Cluster& cluster, const codec::PodDocument& doc, const std::string& source,
               const std::string& name, PlacedPod& p, std::vector<std::string>& warnings) {
  auto id = cluster.find(doc.assigned_node);
  if (!id) {
    p.role = PlacedRole::UnknownNode;
    warnings.push_back(
        fmt::format("{}:{}: pod '{}' runs on node '{}', which is not in the node list: not counted", source,
                    doc.line, name, doc.assigned_node));
    return;
  }
  const int allocated_line = doc.allocated_line ? doc.allocated_line : doc.line;
  codec::AllocationText text;
  try {
    text = codec::decode_allocation_text(doc.allocated);
  } catch (const CodecError& e) {
    throw InputError(source, allocated_line, "metadata.annotations.hami.io/vgpu-devices-allocated",
                     fmt::format("pod '{}': {}", name, e.what()));
  }
  const Node& node = cluster.node(*id);
  for (auto& container : text) {
    std::erase_if(container, [&](const codec::GrantText& g) {
      for (const auto& d : node.devices)
        if (d.uuid == codec::card_of(g.uuid)) return false;
      warnings.push_back(
          fmt::format("{}:{}: pod '{}' holds card '{}', which is not registered on node '{}': not counted",
                      source, allocated_line, name, g.uuid, node.name));
      return true;
    });
  }
  p.role = PlacedRole::Hami;
  p.node = *id;
  p.allocation = codec::resolve_allocation(text, node, doc.request.init_containers.size());
  const std::string mig_error = read_mig_reservations(node, doc.mig_allocations, p.allocation);
  if (!mig_error.empty() || !p.allocation.closes_cards.empty())
    warnings.push_back(fmt::format(
        "{}:{}: metadata.annotations.{}: pod '{}': {}{} card(s) closed while it runs, as HAMi fails closed",
        source, doc.mig_allocations_line ? doc.mig_allocations_line : allocated_line,
        codec::kMigAllocationsAnnotation, name, mig_error.empty() ? "" : mig_error + "; ",
        p.allocation.closes_cards.size()));
}

// A bound pod with DeviceShare's annotation holds what it says.
void read_koordinator(const Cluster& cluster, const codec::PodDocument& doc, const std::string& source,
                      const std::string& name, PlacedPod& p, std::vector<std::string>& warnings) {
  const int line = doc.koordinator_allocated_line ? doc.koordinator_allocated_line : doc.line;
  std::vector<codec::KoordinatorGrantText> grants;
  try {
    grants = codec::decode_device_allocated(doc.koordinator_allocated);
  } catch (const CodecError& e) {
    throw InputError(source, line, fmt::format("metadata.annotations.{}", codec::kKoordDeviceAllocated),
                     fmt::format("pod '{}': {}", name, e.what()));
  }
  const Node& node = cluster.node(p.node);
  std::vector<std::string> dropped;
  const size_t device = std::min(doc.request.first_device_index(), doc.request.container_count() - 1);
  p.allocation = codec::resolve_device_allocated(grants, node, doc.request.container_count(),
                                                 doc.request.init_containers.size(), device, dropped);
  for (const auto& d : dropped) warnings.push_back(fmt::format("{}:{}: pod '{}': {}", source, line, name, d));
  p.role = PlacedRole::Koordinator;
}

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

}  // namespace

std::vector<PlacedPod> read_placed_pods(const Cluster& cluster, const std::vector<codec::PodDocument>& docs,
                                        const std::string& source, std::string_view skip_uid,
                                        std::vector<std::string>& warnings, KaiGroups* kai_groups) {
  std::vector<PlacedPod> out;
  out.reserve(docs.size());
  std::map<std::string, int> seen;  // namespace/name or uid -> line
  std::map<size_t, KaiNodePods> kai;
  for (size_t i = 0; i < docs.size(); ++i) {
    const codec::PodDocument& doc = docs[i];
    const std::string name = doc.request.ns + "/" + doc.request.name;
    for (const std::string& key :
         {name, doc.request.uid.empty() ? std::string() : "uid:" + doc.request.uid}) {
      if (key.empty()) continue;
      auto [it, fresh] = seen.emplace(key, doc.line);
      if (!fresh)
        throw InputError(source, doc.line, "metadata.name",
                         fmt::format("pod '{}' is listed twice (first at line {})", name, it->second));
    }
    PlacedPod& p = out.emplace_back();
    p.doc = i;
    if (doc.terminated()) {
      p.role = PlacedRole::Terminated;
      continue;
    }
    // The pod being placed itself is dropped first (Filter's delPod, by UID).
    const bool same_uid = !skip_uid.empty() && doc.request.uid == skip_uid;
    if (!doc.assigned_node.empty()) {
      if (same_uid) {
        p.role = PlacedRole::SameUid;
        continue;
      }
      read_hami(cluster, doc, source, name, p, warnings);
      continue;
    }
    if (!doc.allocated.empty())
      warnings.push_back(fmt::format("{}:{}: pod '{}' has {} but no {}: no GPU counted, as HAMi does", source,
                                     doc.line, name, codec::kAllocatedAnnotation,
                                     codec::kAssignedNodeAnnotation));
    // Not HAMi's, but bound to a node: kube-scheduler counts its CPU and
    // memory there, and so does the core's host check; Koordinator and KAI
    // count what their marks say.
    auto bound = doc.node_name.empty() ? std::nullopt : cluster.find(doc.node_name);
    p.role = bound ? PlacedRole::BoundOnly : PlacedRole::Unplaced;
    if (!bound) continue;
    p.node = *bound;
    if (same_uid && (!doc.koordinator_allocated.empty() || cluster.node(*bound).cards_from == Dialect::Kai)) {
      p.role = PlacedRole::SameUid;
      continue;
    }
    if (!doc.koordinator_allocated.empty()) {
      read_koordinator(cluster, doc, source, name, p, warnings);
      continue;
    }
    if (cluster.node(*bound).cards_from != Dialect::Kai) continue;
    const auto groups = codec::kai_groups_of(doc.meta.labels);
    KaiNodePods& pods = kai[*bound];
    if (doc.request.ns == codec::kKaiReservationNamespace && !groups.empty()) {
      p.role = PlacedRole::KaiReservation;
      pods.groups.insert(groups.front());
      if (!doc.kai_reserved_gpu.empty()) pods.reserved[groups.front()] = doc.kai_reserved_gpu;
      continue;
    }
    const KaiRequirement r = kai_requirement(doc.request);
    if (r.shared() && !groups.empty()) {
      p.role = PlacedRole::Kai;
      pods.groups.insert(groups.begin(), groups.end());
      pods.shared.push_back(out.size() - 1);
    } else if (r.kind == KaiRequirement::Kind::Regular) {
      p.role = PlacedRole::Kai;
      pods.whole.push_back(out.size() - 1);
    }
  }
  for (const auto& [id, pods] : kai)
    place_kai_pods(cluster, id, pods, docs, out, source, warnings, kai_groups);
  return out;
}

}  // namespace gpuslice::core
