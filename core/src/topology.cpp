#include "gpuslice/core/topology.hpp"

#include <boost/graph/adjacency_matrix.hpp>
#include <boost/graph/properties.hpp>

namespace gpuslice::core {

namespace {

// Cards are vertices; an edge carries the pair score the device plugin
// published (HAMi reads scores[a][b]; a missing pair scores 0).
using CardGraph =
    boost::adjacency_matrix<boost::directedS, boost::no_property, boost::property<boost::edge_weight_t, int>>;

CardGraph build_graph(const Node& node) {
  const size_t n = node.devices.size();
  CardGraph g(n);
  for (size_t a = 0; a < node.topology.size() && a < n; ++a)
    for (size_t b = 0; b < node.topology[a].size() && b < n; ++b)
      if (a != b && node.topology[a][b] != 0) boost::add_edge(a, b, node.topology[a][b], g);
  return g;
}

int pair_score(const CardGraph& g, int a, int b) {
  auto [e, present] = boost::edge(static_cast<size_t>(a), static_cast<size_t>(b), g);
  return present ? boost::get(boost::edge_weight, g, e) : 0;
}

}  // namespace

int link_weight(LinkKind kind) {
  switch (kind) {
    case LinkKind::CrossCPU:
      return 10;
    case LinkKind::SameCPU:
      return 20;
    case LinkKind::HostBridge:
      return 30;
    case LinkKind::MultiSwitch:
      return 40;
    case LinkKind::SingleSwitch:
      return 50;
    case LinkKind::SameBoard:
      return 60;
  }
  return 0;
}

std::vector<int> choose_by_topology(const Node& node, std::span<const int> eligible, int count) {
  const CardGraph g = build_graph(node);
  if (count == 1) {
    // A single card goes where it disturbs the well-connected groups least.
    int best = -1, best_total = 0;
    for (int a : eligible) {
      int total = 0;
      for (int b : eligible)
        if (a != b) total += pair_score(g, a, b);
      if (best < 0 || total < best_total) {
        best = a;
        best_total = total;
      }
    }
    return best < 0 ? std::vector<int>{} : std::vector<int>{best};
  }
  // Every subset of `count` eligible cards in lexicographic order of their
  // walk positions; the first strict maximum of the pairwise sum wins.
  const size_t n = eligible.size(), k = static_cast<size_t>(count);
  std::vector<int> best;
  if (k > n) return best;
  int best_sum = -1;
  std::vector<size_t> pick(k);
  for (size_t i = 0; i < k; ++i) pick[i] = i;
  while (true) {
    int sum = 0;
    for (size_t i = 0; i + 1 < k; ++i)
      for (size_t j = i + 1; j < k; ++j) sum += pair_score(g, eligible[pick[i]], eligible[pick[j]]);
    if (best.empty() || sum > best_sum) {
      best_sum = sum;
      best.clear();
      for (size_t i : pick) best.push_back(eligible[i]);
    }
    size_t i = k;
    while (i > 0 && pick[i - 1] == n - k + (i - 1)) --i;
    if (i == 0) break;
    ++pick[i - 1];
    for (size_t j = i; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  return best;
}

}  // namespace gpuslice::core
