#include "heuristic_search.hpp"

#include <algorithm>
#include <numeric>

#include "bounds.hpp"

namespace gpuslice::defrag {

namespace {

// How wide the heuristic looks per step: nodes nearest to room, sets of
// pods per node, and orders tried per set.
constexpr size_t kNodes = 64;
constexpr size_t kSetsPerNode = 16;
constexpr size_t kCandidatesPerSize = 256;

struct Candidate {
  std::vector<uint32_t> pods;  // leaving these gives the target room on `node`
  size_t node = 0;
  int64_t mib = 0;
};

struct Trial {
  std::vector<uint32_t> order;
  size_t placed = 0;  // targets placed after these moves
  Cost cost;
};

class Heuristic {
 public:
  Heuristic(const Problem& problem, int max_moves, uint64_t budget)
      : problem_(problem), replay_(problem), max_moves_(max_moves), budget_(budget) {}

  HeuristicOutcome run() {
    HeuristicOutcome out;
    {
      Bounds bounds(replay_, 0);
      if (bounds.active()) {
        out.impossible = bounds.never();
        for (int cap = 0; cap <= max_moves_ && !out.impossible; ++cap) {
          bounds.raise_cap(cap);
          if (bounds.bound() <= cap) break;
        }
        out.lower_bound = out.impossible ? max_moves_ + 1 : bounds.bound();
      }
    }
    if (out.impossible || out.lower_bound > max_moves_) return finish(out);
    for (;;) {
      auto placed = replay_.place_targets();
      if (placed.size() == problem_.targets.size()) {
        replay_.remove_targets(placed);
        out.plan = plan_of(problem_, replay_.moves(), std::move(placed));
        return finish(out);
      }
      const int left = max_moves_ - static_cast<int>(replay_.moves().size());
      // Where the first target that does not place could find room, with
      // the ones before it placed.
      std::vector<std::vector<Candidate>> by_size = candidates(placed.size(), left);
      replay_.remove_targets(placed);
      std::optional<Trial> chosen;
      for (const auto& group : by_size) {
        for (const Candidate& c : group) {
          if (replay_.placements() > budget_) break;
          for (const auto& order : orders_of(c.pods)) {
            auto t = trial(order);
            if (t && t->placed > placed.size() &&
                (!chosen || t->placed > chosen->placed ||
                 (t->placed == chosen->placed && t->cost < chosen->cost)))
              chosen = std::move(t);
          }
        }
        if (chosen) break;  // the fewest moves that make progress
      }
      if (!chosen) return finish(out);  // no set makes progress, or the budget is spent
      for (uint32_t p : chosen->order) replay_.move(p);
    }
  }

 private:
  HeuristicOutcome finish(HeuristicOutcome& out) {
    out.placements = replay_.placements();
    return std::move(out);
  }

  // Removal sets for target `index` by size (smallest first), each size's
  // sets ordered by memory moved, then node.
  std::vector<std::vector<Candidate>> candidates(size_t index, int left) {
    std::vector<std::vector<Candidate>> by_size;
    if (left <= 0) return by_size;
    RoomBound room(replay_, problem_.targets[index].request, 0);
    if (room.never()) return by_size;
    room.raise_cap(left);
    std::vector<size_t> nodes;
    for (size_t n = 0; n < replay_.cluster().size(); ++n)
      if (room.at(n) >= 1 && room.at(n) <= left) nodes.push_back(n);
    std::stable_sort(nodes.begin(), nodes.end(), [&](size_t a, size_t b) { return room.at(a) < room.at(b); });
    if (nodes.size() > kNodes) nodes.resize(kNodes);
    by_size.resize(static_cast<size_t>(left));
    for (size_t n : nodes)
      // The node's own distance and a size above it: one more pod leaving
      // can keep the scheduler from putting the others back.
      for (int size = room.at(n); size <= std::min(left, room.at(n) + 1); ++size)
        for (auto& pods : room.removal_sets(n, size, kSetsPerNode)) {
          Candidate c{std::move(pods), n, 0};
          for (uint32_t p : c.pods) c.mib += problem_.pods[p].gpu_mib;
          by_size[static_cast<size_t>(size) - 1].push_back(std::move(c));
        }
    for (auto& group : by_size) {
      std::stable_sort(group.begin(), group.end(),
                       [](const Candidate& a, const Candidate& b) { return a.mib < b.mib; });
      if (group.size() > kCandidatesPerSize) group.resize(kCandidatesPerSize);
    }
    return by_size;
  }

  // Every order of a small set; the largest pods first and last otherwise.
  static std::vector<std::vector<uint32_t>> orders_of(std::vector<uint32_t> pods) {
    std::vector<std::vector<uint32_t>> out;
    if (pods.size() <= 3) {
      std::sort(pods.begin(), pods.end());
      do out.push_back(pods);
      while (std::next_permutation(pods.begin(), pods.end()));
      return out;
    }
    out.push_back(pods);
    out.push_back({pods.rbegin(), pods.rend()});
    return out;
  }

  // The moves in this order, then the targets: how many place. nullopt
  // when a move is not possible or changes nothing.
  std::optional<Trial> trial(const std::vector<uint32_t>& order) {
    size_t made = 0;
    bool ok = true;
    for (uint32_t p : order) {
      const auto m = replay_.move(p);
      if (!m) {
        ok = false;
        break;
      }
      ++made;
      if (m->to == m->from) {
        ok = false;
        break;
      }
    }
    std::optional<Trial> t;
    if (ok) {
      auto placed = replay_.place_targets();
      t = Trial{order, placed.size(), cost_of(problem_, replay_.moves())};
      replay_.remove_targets(placed);
    }
    for (size_t i = 0; i < made; ++i) replay_.undo();
    return t;
  }

  const Problem& problem_;
  Replay replay_;
  int max_moves_;
  uint64_t budget_;
};

}  // namespace

HeuristicOutcome heuristic_search(const Problem& problem, int max_moves, uint64_t budget) {
  return Heuristic(problem, max_moves, budget).run();
}

}  // namespace gpuslice::defrag
