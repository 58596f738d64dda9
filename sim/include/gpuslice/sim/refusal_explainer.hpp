// Why a pod fits no node, in its scheduler's reasons, without re-running the full
// report on every node for every refusal: each node's reason for a request
// shape is kept until that node's usage changes. On a large fleet the
// refusals of a trace would otherwise cost more than placing the pods.
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/reasons.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::sim {

// Nodes per reason (a node giving several reasons counts under each).
using NodesPerReason = std::array<size_t, core::kReasonCount>;

class RefusalExplainer {
 public:
  RefusalExplainer();
  // Why `pod` (of request shape `shape`, any stable id: pods of one shape
  // must be interchangeable for fit) fits no node, by reason.
  // `fit`: the policy's own fit when it brings one (Koordinator, KAI),
  // else HAMi's with `gpu_policy`.
  NodesPerReason reasons(const core::Cluster& cluster, size_t shape, const core::PodRequest& pod,
                         const std::string& gpu_policy, core::DeviceFit* fit = nullptr);
  // How many nodes fit `pod` in the same terms. None means no scheduler
  // placing by that fit takes the pod anywhere: it accepts no node the fit
  // refuses.
  size_t fitting(const core::Cluster& cluster, size_t shape, const core::PodRequest& pod,
                 const std::string& gpu_policy, core::DeviceFit* fit = nullptr);
  // True when `shape` was explained on this cluster's history already, so
  // asking it again costs a refit of the nodes changed since, not the fleet.
  bool knows(const core::Cluster& cluster, size_t shape) const {
    return epoch_ == cluster.epoch() && by_shape_.count(shape) > 0;
  }

 private:
  // One shape's refusal per node and how many nodes give each refusal,
  // kept as nodes change: a call refits and recounts only changed nodes.
  // Versions apart from refusals: the scans read versions alone.
  struct Shape {
    std::vector<uint64_t> version;  // by node: its version when fitted (UINT64_MAX: never)
    std::vector<uint32_t> refusal;  // by node: index into refusals_
    std::vector<size_t> count;      // by index into refusals_
    size_t seen = 0;                // the cluster's change_count() when last brought up to date
  };
  // The shape's kept refusals, refitted on the nodes changed since its last call.
  Shape& brought_up_to_date(const core::Cluster& cluster, size_t shape, const core::PodRequest& pod,
                            const std::string& gpu_policy, core::DeviceFit* fit);
  uint32_t intern(const core::Refusal& refusal);
  static constexpr uint32_t kFitsId = 0;  // "fits": interned first, by the constructor

  std::unordered_map<size_t, Shape> by_shape_;
  std::vector<core::Refusal> refusals_;                              // the distinct refusals seen
  std::unordered_map<uint64_t, std::vector<uint32_t>> refusal_ids_;  // by hash
  uint64_t epoch_ = 0;
  core::FitScratch scratch_;
  std::string gpu_text_;  // what gpu_ was parsed from
  core::GpuPolicy gpu_ = core::GpuPolicy::parse("");
};

}  // namespace gpuslice::sim
