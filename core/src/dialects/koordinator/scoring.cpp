// DeviceShare's resourceAllocationScorer (scoring.go): LeastAllocated or
// MostAllocated over gpu-memory-ratio and gpu-memory, weight 1 each, in
// integers as kube-scheduler's helpers compute them.
#include <utility>
#include <vector>

#include "gpuslice/core/dialects/koordinator/policy.hpp"

namespace gpuslice::core {

namespace {

constexpr int64_t kMaxNodeScore = 100;

int64_t least_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

int64_t most_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return requested * kMaxNodeScore / capacity;
}

// One resource's (requested, allocatable) as scoreDevice and scoreNode
// build them: nothing when the total is 0; the request counted only when
// the total is at least the free amount.
struct Pair {
  bool present = false;
  int64_t requested = 0, allocatable = 0;
};
Pair pair_of(int64_t total, int64_t free, const std::optional<int64_t>& asked) {
  if (total == 0) return {};
  int64_t requested = total;
  if (total >= free) requested = total - free + asked.value_or(0);
  return {true, requested, total};
}

int64_t combine(bool most, const Pair& ratio, const Pair& memory) {
  int64_t sum = 0, weights = 0;
  for (const Pair* p : {&ratio, &memory}) {
    if (!p->present) continue;
    sum +=
        most ? most_requested(p->requested, p->allocatable) : least_requested(p->requested, p->allocatable);
    weights += 1;
  }
  return weights == 0 ? 0 : sum / weights;
}

}  // namespace

int64_t koordinator_device_score(const KoordinatorRequirement& r, bool most_allocated, int64_t total_ratio,
                                 int64_t total_bytes, int64_t free_ratio, int64_t free_bytes) {
  return combine(most_allocated, pair_of(total_ratio, free_ratio, r.ratio),
                 pair_of(total_bytes, free_bytes, r.bytes));
}

int64_t koordinator_node_score(const KoordinatorRequirement& r, bool most_allocated,
                               const std::vector<KoordinatorCard>& cards) {
  int64_t total_ratio = 0, total_bytes = 0, free_ratio = 0, free_bytes = 0;
  for (const auto& c : cards) {
    total_ratio += c.total_ratio;
    total_bytes += c.total_bytes;
    free_ratio += c.free_ratio;
    free_bytes += c.free_bytes;
  }
  return combine(most_allocated, pair_of(total_ratio, free_ratio, r.ratio),
                 pair_of(total_bytes, free_bytes, r.bytes));
}

}  // namespace gpuslice::core
