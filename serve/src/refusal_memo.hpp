// The last refused filter's answer, kept to answer the same question again.
// kube-scheduler filters a pod that fits nowhere again and again (its
// backoff, and each replica of a Deployment or Job of one shape), naming the
// same nodes, and between two such filters few nodes change. A node's
// refusal reads only the pod's shape and that node's state (its cards'
// registration and use, its host use), so the kept answer holds while the
// names, the cluster's node set and the pod's shape are the same and every
// named node changed since is refused exactly as before, which is checked
// by fitting each such node again. Anything else is a miss, and the full
// report is built afresh.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/reasons.hpp"
#include "gpuslice/core/request.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/serve/protocol.hpp"

namespace gpuslice::serve {

class RefusalMemo {
 public:
  // What the extender answers and records for a refused pod.
  struct Answer {
    FailedNodes failed;
    std::vector<core::KubeEvent> events;
  };
  // A node's refusal of the pod now (nullopt: the pod fits it).
  using Refit = std::function<std::optional<core::Refusal>(size_t node)>;

  // The kept answer when it still holds for `pod` on `cluster` with the
  // names looked up as `names_generation`; else null (and it is dropped).
  const Answer* find(const core::Cluster& cluster, uint64_t names_generation, const core::PodRequest& pod,
                     const Refit& refit);
  // Keeps the answer to a refusal built afresh: `decision` is the core's
  // full report it was written from (each named node's refusal).
  void keep(const core::Cluster& cluster, uint64_t names_generation, const core::PodRequest& pod,
            const core::Decision& decision, Answer answer);
  void clear() { valid_ = false; }

  // Beyond this many changed nodes a fresh report costs less than fitting
  // each of them again.
  static constexpr size_t kMaxRefits = 64;

 private:
  static constexpr uint32_t kNotNamed = UINT32_MAX;
  bool valid_ = false;
  uint64_t epoch_ = 0, names_generation_ = 0;
  size_t change_count_ = 0;  // the cluster's change log when last checked
  core::PodRequest pod_;
  std::vector<core::Refusal> refusals_;  // each distinct refusal once
  std::vector<uint32_t> refusal_of_;     // node -> its refusal in refusals_ (kNotNamed: not named)
  Answer answer_;
};

}  // namespace gpuslice::serve
