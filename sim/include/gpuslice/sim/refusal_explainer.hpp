// Why a pod fits no node, in HAMi's reasons, without re-running the full
// report on every node for every refusal: each node's reason for a request
// shape is kept until that node's usage changes. On a large fleet the
// refusals of a trace would otherwise cost more than placing the pods.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::sim {

class RefusalExplainer {
 public:
  // Nodes per HAMi reason name for `pod` (of request shape `shape`, any
  // stable id: pods of one shape must be interchangeable for fit).
  std::map<std::string, size_t> reasons(const core::Cluster& cluster, size_t shape,
                                        const core::PodRequest& pod, const std::string& gpu_policy);

 private:
  struct Cached {
    uint64_t version = UINT64_MAX;
    uint32_t reason = 0;  // index into reason_names_
  };
  uint32_t intern(const std::string& formatted);

  std::unordered_map<size_t, std::vector<Cached>> by_shape_;
  std::vector<std::vector<std::string>> reason_names_;  // interned reason -> names
  std::unordered_map<std::string, uint32_t> reason_ids_;
  uint64_t epoch_ = 0;
  core::FitScratch scratch_;
};

}  // namespace gpuslice::sim
