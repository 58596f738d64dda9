// The FGD study's workload and node order (see openb.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/openb.hpp"

namespace gpuslice::sim {

namespace {

// Uniform in [0, n), the same on every standard library (std::uniform_int_
// distribution and std::shuffle are not).
uint64_t below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do v = rng();
  while (v >= limit);
  return v % n;
}

template <typename T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(rng, i)]);
}

// GPU share per card (milli) of an openb pod: what the artifact's tuning
// compares with the room left (its PodResource.MilliGpu, not the total).
int64_t per_card_milli(const PodSpec& p) {
  const auto* c = p.request.first_device_container();
  return c && c->count > 0 ? p.gpu_milli / c->count : 0;
}

}  // namespace

Workload study_workload(Workload trace, const core::Cluster& fleet, const OpenbOptions& options,
                        const std::string& source) {
  int64_t capacity = 0, demand = 0;
  for (size_t id = 0; id < fleet.size(); ++id)
    capacity += 1000 * static_cast<int64_t>(fleet.node(id).devices.size());
  for (const auto& p : trace) demand += p.gpu_milli;
  require_gpu_demand(trace, source);
  if (capacity == 0) throw core::InputError(source, 0, "gpu", "the fleet has no GPU");
  const double target = options.tune * static_cast<double>(capacity);
  std::mt19937_64 rng(options.seed);

  Workload out = trace;
  for (auto& p : out) p.resampled = false;
  shuffle(out, rng);
  // Tuning down: pods removed at random until demand fits the target.
  while (static_cast<double>(demand) > target && !out.empty()) {
    const size_t k = below(rng, out.size());
    demand -= out[k].gpu_milli;
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
  }
  // Tuning up: draws appended until the next one would pass the target.
  // Each draw asks for a GPU with probability > 0, so this ends; the cap
  // only bounds memory on absurd inputs (kMaxPods, openb.hpp).
  while (out.size() < kMaxPods) {
    const PodSpec& drawn = trace[below(rng, trace.size())];
    if (static_cast<double>(demand + per_card_milli(drawn)) > target) break;
    demand += drawn.gpu_milli;
    out.push_back(drawn);
    out.back().resampled = true;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    auto& p = out[i];
    p.request.name = fmt::format("{}-{}", p.request.name, i);
    p.arrival = static_cast<double>(i);
    p.duration = kForever;
  }
  return out;
}

core::Cluster study_node_order(const core::Cluster& fleet, uint64_t seed) {
  std::vector<size_t> order(fleet.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // The artifact sorts nodes by name before prefixing them.
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return fleet.node(a).name < fleet.node(b).name; });
  std::mt19937_64 rng(seed ^ 0x6e6f64652d6f7264ULL);  // a stream apart from the workload's
  shuffle(order, rng);
  return fleet.reordered(order);
}

}  // namespace gpuslice::sim
