// Request shapes: pods that HAMi's fit and every policy's score cannot tell
// apart (same containers, host demand, selectors, policies, weights; names
// and UIDs aside) share a shape id. The one definition of "same request"
// behind the scheduler's per-shape caches, the simulator's per-shape
// answers and the grouping of typical pods.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

// True when fit and scoring read the same from both requests.
bool same_shape(const PodRequest& a, const PodRequest& b);
// A hash consistent with same_shape.
uint64_t shape_hash(const PodRequest& pod);

// Dense shape ids (0, 1, 2, ... in order of first sight), stable for the
// table's life.
class RequestShapes {
 public:
  uint32_t id(const PodRequest& pod);
  size_t size() const { return representatives_.size(); }
  // The first request seen of a shape.
  const PodRequest& representative(uint32_t id) const { return representatives_[id]; }

 private:
  std::vector<PodRequest> representatives_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;
};

}  // namespace gpuslice::core
