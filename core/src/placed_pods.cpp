#include "gpuslice/core/placed_pods.hpp"

#include <fmt/format.h>

#include <map>

#include "gpuslice/core/codec/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core {

std::vector<PlacedPod> read_placed_pods(const Cluster& cluster, const std::vector<codec::PodDocument>& docs,
                                        const std::string& source, std::string_view skip_uid,
                                        std::vector<std::string>& warnings) {
  std::vector<PlacedPod> out;
  out.reserve(docs.size());
  std::map<std::string, int> seen;  // namespace/name or uid -> line
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
    if (doc.assigned_node.empty()) {
      if (!doc.allocated.empty())
        warnings.push_back(fmt::format("{}:{}: pod '{}' has {} but no {}: no GPU counted, as HAMi does",
                                       source, doc.line, name, codec::kAllocatedAnnotation,
                                       codec::kAssignedNodeAnnotation));
      // Not HAMi's, but bound to a node: kube-scheduler counts its CPU and
      // memory there, and so does the core's host check.
      auto bound = doc.node_name.empty() ? std::nullopt : cluster.find(doc.node_name);
      p.role = bound ? PlacedRole::BoundOnly : PlacedRole::Unplaced;
      if (bound) p.node = *bound;
      continue;
    }
    if (!skip_uid.empty() && doc.request.uid == skip_uid) {
      p.role = PlacedRole::SameUid;
      continue;
    }
    auto id = cluster.find(doc.assigned_node);
    if (!id) {
      p.role = PlacedRole::UnknownNode;
      warnings.push_back(
          fmt::format("{}:{}: pod '{}' runs on node '{}', which is not in the node list: not counted", source,
                      doc.line, name, doc.assigned_node));
      continue;
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
  }
  return out;
}

}  // namespace gpuslice::core
