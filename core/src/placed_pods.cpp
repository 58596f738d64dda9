#include "gpuslice/core/placed_pods.hpp"

#include <fmt/format.h>

#include <map>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core {

std::vector<PlacedPod> read_placed_pods(const Cluster& cluster, const std::vector<codec::PodDocument>& docs,
                                        const std::string& source, std::string_view skip_uid,
                                        std::vector<std::string>& warnings, KaiGroups* kai_groups) {
  std::vector<PlacedPod> out;
  out.reserve(docs.size());
  // Each dialect's reading, asked in registry order: the first that claims
  // a pod reads what it holds.
  dialects::PlacedContext context{cluster, docs, out, source, warnings, kai_groups};
  std::vector<std::unique_ptr<dialects::PlacedReading>> readings;
  for (const dialects::DialectUnit* unit : dialects::all())
    if (auto reading = unit->placed_reading(context)) readings.push_back(std::move(reading));
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
    // HAMi's grants without its node: HAMi counts nothing (the pod may
    // still hold in another dialect's terms below).
    if (doc.assigned_node.empty() && !doc.allocated.empty())
      warnings.push_back(fmt::format("{}:{}: pod '{}' has {} but no {}: no GPU counted, as HAMi does", source,
                                     doc.line, name, codec::kAllocatedAnnotation,
                                     codec::kAssignedNodeAnnotation));
    // Bound to a node: kube-scheduler counts its CPU and memory there, and
    // so does the core's host check, whoever placed it.
    const auto bound = doc.node_name.empty() ? std::nullopt : cluster.find(doc.node_name);
    p.role = bound ? PlacedRole::BoundOnly : PlacedRole::Unplaced;
    if (bound) p.node = *bound;
    // The pod being placed itself is dropped first (Filter's delPod, by UID).
    const bool same_uid = !skip_uid.empty() && doc.request.uid == skip_uid;
    for (auto& reading : readings) {
      if (!reading->claims(doc, bound)) continue;
      if (same_uid)
        p.role = PlacedRole::SameUid;
      else
        reading->read(i);
      break;
    }
  }
  for (auto& reading : readings) reading->finish();
  return out;
}

std::optional<Holding> holding_of(const PlacedPod& p, const HostResources& host) {
  if (p.role == PlacedRole::BoundOnly || p.role == PlacedRole::KaiReservation)
    return Holding{p.node, PodAllocation{}, host};
  if (p.holds()) return Holding{p.node, p.allocation, host};
  return std::nullopt;
}

}  // namespace gpuslice::core
