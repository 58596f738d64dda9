// Pods already in a cluster, read as each scheduler reads its pod cache:
// HAMi's (pkg/scheduler/scheduler.go onAddPod and getNodesUsage),
// Koordinator's DeviceShare (eventhandler_pod.go: device-allocated of bound
// pods) and KAI's (GPU groups from runai-gpu-group labels and reservation
// pods). One reading for `gpuslice place --existing` and the simulator's
// cluster snapshots.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/codec/manifest.hpp"

namespace gpuslice::core {

enum class PlacedRole {
  Terminated,      // Succeeded or Failed: holds nothing (k8sutil.IsPodInTerminatedState)
  Unplaced,        // neither HAMi's nor bound to a known node
  BoundOnly,       // not HAMi's, bound to a known node: its CPU and memory count there
  Hami,            // hami.io/vgpu-node on a known node: its grants count
  Koordinator,     // bound, with scheduling.koordinator.sh/device-allocated: its grants count
  Kai,             // bound on a KAI node: its GPU groups' share, or the whole GPUs it asks
  KaiReservation,  // KAI's reservation pod of a GPU group: holds the group's card for it (its CPU and memory
                   // count)
  Dra,             // bound, its ResourceClaims allocated (PodDocument::claim_held): their devices count
  UnknownNode,     // hami.io/vgpu-node names a node not in the list: counts nothing (warned)
  SameUid,         // the pod being placed itself (Filter's delPod, by UID)
};

struct PlacedPod {
  size_t doc = 0;  // index into the documents read
  PlacedRole role = PlacedRole::Unplaced;
  size_t node = 0;           // BoundOnly, Hami, Koordinator, Kai, Dra, KaiReservation
  PodAllocation allocation;  // Hami, Koordinator, Kai, Dra: grants on cards still there
  bool holds() const {
    return role == PlacedRole::Hami || role == PlacedRole::Koordinator || role == PlacedRole::Kai ||
           role == PlacedRole::Dra;
  }
};

// What a placed pod holds on its node, as every reader charges it (place's
// --existing, serve's pod cache, the simulator's snapshots): a pod bound
// without grants (or KAI's reservation pod) holds its CPU and memory only;
// one that holds nothing here is nullopt.
struct Holding {
  size_t node = 0;
  PodAllocation allocation;
  HostResources host;
};
std::optional<Holding> holding_of(const PlacedPod& pod, const HostResources& host);

// KAI's GPU groups on each node: node id -> card position -> group name.
using KaiGroups = std::map<size_t, std::map<int, std::string>>;

// One entry per document, in order. A pod listed twice (name or UID) or an
// unreadable allocation annotation throws InputError naming `source`, the
// line and the field; grants on cards no longer registered and pods on
// unknown nodes are dropped with a line in `warnings`.
std::vector<PlacedPod> read_placed_pods(const Cluster& cluster, const std::vector<codec::PodDocument>& docs,
                                        const std::string& source, std::string_view skip_uid,
                                        std::vector<std::string>& warnings, KaiGroups* kai_groups = nullptr);

}  // namespace gpuslice::core
