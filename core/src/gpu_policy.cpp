#include "gpuslice/core/gpu_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gpuslice::core {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
constexpr std::string_view kGpuPolicyNames[] = {"binpack", "spread", "topology-aware", "mutex", "numa"};
}  // namespace

std::string gpu_policy_problem(std::string_view text) {
  size_t tokens = 0, pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string_view token =
        trim(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (!token.empty()) {
      ++tokens;
      if (std::find(std::begin(kGpuPolicyNames), std::end(kGpuPolicyNames), token) ==
          std::end(kGpuPolicyNames))
        return fmt::format(
            "unknown GPU policy '{}' in '{}' (binpack, spread, topology-aware, mutex, numa or a "
            "comma chain of them)",
            token, text);
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (tokens == 0)
    return fmt::format("empty GPU policy '{}' (binpack, spread, topology-aware, mutex, numa)", text);
  return {};
}

void check_gpu_policy(std::string_view text) {
  if (std::string problem = gpu_policy_problem(text); !problem.empty()) throw std::invalid_argument(problem);
}

GpuPolicy GpuPolicy::parse(std::string_view text) {
  GpuPolicy p;
  p.text = std::string(text);
  bool seen[3] = {false, false, false};
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string_view token =
        trim(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    auto add = [&](SortKey k) {
      if (!seen[static_cast<int>(k)]) {
        seen[static_cast<int>(k)] = true;
        p.keys.push_back(k);
      }
    };
    if (token == "binpack")
      add(SortKey::Binpack);
    else if (token == "spread")
      add(SortKey::Spread);
    else if (token == "numa")
      add(SortKey::Numa);
    else if (token == "mutex")
      p.mutex = true;
    else if (token == "topology-aware")
      p.topology = true;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  // HAMi: a comma list, or bare "numa", is a chain of sort keys; any other
  // single value compares the whole string (binpack, mutex, else spread).
  p.chain = text.find(',') != std::string_view::npos || text == "numa";
  p.binpack = !p.chain && text == "binpack";
  if (!p.chain) p.mutex = text == "mutex";
  if (!p.chain) p.topology = text == "topology-aware";
  return p;
}

float device_score(const Device& device, const DeviceUsage& usage, const ContainerRequest& request,
                   const ScoringWeights& weights) {
  if (device.slots == 0 || device.cores == 0 || device.memory_mib == 0) return 0.0f;
  int32_t r = 0, c = 0;
  int64_t m = 0;
  if (request.wants_devices() && device.vendor == request.vendor) {
    r = 1;
    c = request.cores;
    m = (request.memory_percent != 0 && request.memory_percent != kMemoryPercentUnset)
            ? device.memory_mib * request.memory_percent / 100
            : request.memory_mib;
  }
  // float arithmetic on purpose: HAMi computes in float32, and orderings
  // and printed scores must match it bit for bit.
  const float used_score = static_cast<float>(r + usage.slots) / static_cast<float>(device.slots);
  const float core_score = static_cast<float>(c + usage.cores) / static_cast<float>(device.cores);
  const float mem_score = static_cast<float>(m + usage.memory_mib) / static_cast<float>(device.memory_mib);
  return 10.0f *
         (static_cast<float>(weights.slot) * used_score + static_cast<float>(weights.core) * core_score +
          static_cast<float>(weights.memory) * mem_score);
}

namespace {
// A node has a handful of cards: an insertion sort keeps the order of equals
// (as std::stable_sort does) without the temporary buffer std::stable_sort
// allocates on every call, which fitting each node of a fleet pays per pod.
template <typename Less>
void stable_sort_cards(std::vector<int>& order, Less less) {
  if (order.size() > 32) {
    std::stable_sort(order.begin(), order.end(), less);
    return;
  }
  for (size_t i = 1; i < order.size(); ++i) {
    const int card = order[i];
    size_t j = i;
    for (; j > 0 && less(card, order[j - 1]); --j) order[j] = order[j - 1];
    order[j] = card;
  }
}
}  // namespace

void order_devices(const NodeView& node, std::span<const DeviceUsage> usage, const ContainerRequest& request,
                   const ScoringWeights& weights, const GpuPolicy& policy, bool numa_bind,
                   std::vector<int>& order) {
  const size_t n = node.device_count();
  order.resize(n);
  float scores_small[16];
  std::vector<float> scores_big;
  float* scores = scores_small;
  if (n > 16) {
    scores_big.resize(n);
    scores = scores_big.data();
  }
  for (size_t i = 0; i < n; ++i) {
    order[i] = static_cast<int>(i);
    scores[i] = device_score(node.device(i), usage[i], request, weights);
  }
  auto numa = [&](int i) { return node.device(static_cast<size_t>(i)).numa; };
  auto used = [&](int i) { return usage[static_cast<size_t>(i)].slots; };

  if (policy.chain) {
    std::vector<SortKey> keys = policy.keys.empty() ? std::vector<SortKey>{SortKey::Spread} : policy.keys;
    if (numa_bind && keys.front() != SortKey::Numa) {
      keys.erase(std::remove(keys.begin(), keys.end(), SortKey::Numa), keys.end());
      keys.insert(keys.begin(), SortKey::Numa);
    }
    stable_sort_cards(order, [&](int a, int b) {
      for (SortKey k : keys) {
        switch (k) {
          case SortKey::Binpack:
            if (scores[a] != scores[b]) return scores[a] < scores[b];
            break;
          case SortKey::Spread:
            if (scores[a] != scores[b]) return scores[a] > scores[b];
            break;
          case SortKey::Numa:
            if (numa(a) != numa(b)) return numa(a) < numa(b);
            break;
        }
      }
      return node.device(static_cast<size_t>(a)).index < node.device(static_cast<size_t>(b)).index;
    });
    return;
  }
  // Single policy value. Go's sort keeps registration order among equals for
  // small lists (insertion sort); a stable sort reproduces that.
  stable_sort_cards(order, [&](int a, int b) {
    if (policy.mutex) {
      if (used(a) != used(b)) return used(a) > used(b);
      return numa(a) < numa(b);
    }
    if (numa_bind) {
      if (policy.binpack) {
        if (numa(a) == numa(b)) return scores[a] < scores[b];
        return numa(a) > numa(b);
      }
      if (numa(a) == numa(b)) return scores[a] > scores[b];
      return numa(a) < numa(b);
    }
    if (policy.binpack) {
      if (scores[a] != scores[b]) return scores[a] < scores[b];
      return numa(a) < numa(b);
    }
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return numa(a) < numa(b);
  });
}

}  // namespace gpuslice::core
