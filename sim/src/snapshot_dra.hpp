// A snapshot's DRA objects (resource.k8s.io/v1): the ResourceSlices that
// give nodes their cards, the allocated ResourceClaims running pods hold,
// and the claims or templates pending pods ask through
// (core/dialects/dra/fleet.hpp says what is modelled). Private to the
// snapshot reader (snapshot.cpp).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/dialects/dra/read.hpp"

namespace gpuslice::sim {

struct MalformedPod;

class DraSnapshotReading {
 public:
  // Keeps a resource.k8s.io object; false when `object` is not one.
  bool take(const core::codec::KubeObject& object, const core::codec::ReadContext& context);
  // The claims pod `doc` (its index among the documents read) names.
  void note_pod(size_t doc, const core::codec::PodObject& pod, const core::codec::ReadContext& context);

  // Cards for the nodes no registration gave any, from the slices serving them.
  void register_nodes(std::vector<core::codec::NodeDocument>& nodes, const std::string& source,
                      std::vector<std::string>& warnings) const;

  // After the nodes are in `cluster`: each noted pod's request from its
  // claims, and what a bound one holds through their allocations. A pending
  // pod whose claims cannot be read is returned (left out, as HAMi leaves a
  // malformed pod Pending).
  std::vector<MalformedPod> read_claims(const core::Cluster& cluster,
                                        std::vector<core::codec::PodDocument>& docs,
                                        const std::string& source, std::vector<std::string>& warnings);

  // What bound pod `doc` holds through its claims (null: nothing read).
  const core::PodAllocation* held(size_t doc) const;
  // Whether pending pod `doc` was left out by read_claims.
  bool left_out(size_t doc) const { return left_out_.count(doc) != 0; }

 private:
  core::dra::DraObjects objects_;
  std::vector<std::pair<size_t, std::vector<core::dra::PodClaimRef>>> pods_;
  std::unordered_map<size_t, core::PodAllocation> held_;
  std::unordered_set<size_t> left_out_;
};

}  // namespace gpuslice::sim
