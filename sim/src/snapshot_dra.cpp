#include "snapshot_dra.hpp"

#include <fmt/format.h>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/dra/fleet.hpp"
#include "gpuslice/sim/snapshot.hpp"

namespace gpuslice::sim {

bool DraSnapshotReading::take(const core::codec::KubeObject& object,
                              const core::codec::ReadContext& context) {
  const auto* r = std::get_if<core::codec::ResourceObject>(&object);
  if (!r) return false;
  core::dra::add_resource_object(*r, context, objects_);
  return true;
}

void DraSnapshotReading::note_pod(size_t doc, const core::codec::PodObject& pod,
                                  const core::codec::ReadContext& context) {
  if (!pod.resource_claims.leaf.given()) return;
  auto refs = core::dra::pod_claims(pod, context);
  if (!refs.empty()) pods_.emplace_back(doc, std::move(refs));
}

void DraSnapshotReading::register_nodes(std::vector<core::codec::NodeDocument>& nodes,
                                        const std::string& source, std::vector<std::string>& warnings) const {
  if (objects_.slices.empty()) return;
  const core::dra::SliceIndex index(objects_.slices);
  for (core::codec::NodeDocument& n : nodes) {
    if (!core::dialects::unregistered(n)) continue;  // HAMi's registration (or another's) comes first
    core::dra::NodeInfo info{n.node.name, {}};
    for (const auto& [key, value] : n.labels) info.labels.emplace_back(key, value);
    auto cards = core::dra::cards_from_slices(index, info, source, n.line, warnings);
    if (cards.empty()) continue;
    n.node.devices = std::move(cards);
    n.registered = true;  // later dialects do not count these cards again
  }
}

std::vector<MalformedPod> DraSnapshotReading::read_claims(const core::Cluster& cluster,
                                                          std::vector<core::codec::PodDocument>& docs,
                                                          const std::string& source,
                                                          std::vector<std::string>& warnings) {
  std::vector<MalformedPod> malformed;
  if (pods_.empty()) return malformed;
  const core::dra::ClaimIndex claims(objects_);
  std::unordered_set<std::string> counted;  // claims a pod already holds: a shared claim counts once
  for (auto& [doc_index, refs] : pods_) {
    core::codec::PodDocument& doc = docs[doc_index];
    const std::string name = doc.request.ns + "/" + doc.request.name;
    if (doc.terminated()) continue;
    core::dra::ResolvedClaims resolved = claims.resolve(doc.request.ns, refs);
    const auto bound = doc.node_name.empty() ? std::nullopt : cluster.find(doc.node_name);
    if (bound) {
      if (!resolved.missing.empty()) {
        warnings.push_back(
            fmt::format("{}:{}: pod '{}' names {}, which the dump lacks: its devices are not counted", source,
                        doc.line, name, resolved.missing));
        continue;
      }
      std::vector<core::dra::ResolvedClaim> own;
      for (const auto& c : resolved.claims)
        if (!c.allocation || counted.insert(c.name).second) own.push_back(c);
      // A spec the request model cannot say: the pod asks what it holds.
      (void)core::dra::request_from_claims(own, doc.request);
      core::PodAllocation allocation;
      if (std::string problem =
              core::dra::held_from_allocations(own, cluster.node(*bound), doc.request, allocation);
          !problem.empty()) {
        warnings.push_back(
            fmt::format("{}:{}: pod '{}': {}: its devices are not counted", source, doc.line, name, problem));
        continue;
      }
      held_.emplace(doc_index, std::move(allocation));
      continue;
    }
    std::string problem = resolved.missing.empty()
                              ? core::dra::request_from_claims(resolved.claims, doc.request)
                              : fmt::format("names {}, which the dump lacks", resolved.missing);
    if (problem.empty()) continue;
    MalformedPod m{name, source, doc.line, "spec.resourceClaims", problem};
    warnings.push_back(fmt::format("{} (pod '{}' left Pending, the rest runs; --strict refuses the dump)",
                                   m.message(), m.name));
    left_out_.insert(doc_index);
    malformed.push_back(std::move(m));
  }
  return malformed;
}

const core::PodAllocation* DraSnapshotReading::held(size_t doc) const {
  auto it = held_.find(doc);
  return it == held_.end() ? nullptr : &it->second;
}

}  // namespace gpuslice::sim
