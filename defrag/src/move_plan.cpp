#include "gpuslice/defrag/move_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gpuslice::defrag {

namespace {

std::vector<size_t> touched(const std::vector<Move>& moves) {
  std::vector<size_t> nodes;
  for (const auto& m : moves) {
    nodes.push_back(m.from.node);
    nodes.push_back(m.to.node);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

}  // namespace

Cost cost_of(const Problem& problem, const std::vector<Move>& moves) {
  Cost c;
  c.moves = moves.size();
  for (const auto& m : moves) c.mib += problem.pods[m.pod].gpu_mib;
  c.nodes = touched(moves).size();
  return c;
}

Plan plan_of(const Problem& problem, const std::vector<Move>& moves, std::vector<Place> targets) {
  Plan plan;
  plan.moves = moves;
  plan.targets = std::move(targets);
  plan.cost = cost_of(problem, moves);
  plan.nodes_touched = touched(moves);
  return plan;
}

std::string check_plan(const Problem& problem, const Plan& plan) {
  try {
    Replay replay(problem);
    for (size_t i = 0; i < plan.moves.size(); ++i) {
      const Move& want = plan.moves[i];
      if (want.pod >= problem.pods.size()) return fmt::format("move {}: no such pod", i + 1);
      const std::string& key = problem.pods[want.pod].key;
      if (!replay.may_move(want.pod))
        return fmt::format("move {}: {} may not be moved ({})", i + 1, key,
                           problem.pods[want.pod].movable() ? "its budget is used up"
                                                            : pinned_text(problem.pods[want.pod].pinned));
      if (replay.place_of(want.pod) != want.from)
        return fmt::format("move {}: {} is not where the plan says", i + 1, key);
      const auto got = replay.move(want.pod);
      if (!got) return fmt::format("move {}: {} fits nowhere once evicted", i + 1, key);
      if (got->to != want.to)
        return fmt::format("move {}: the scheduler places {} on '{}', not where the plan says", i + 1, key,
                           problem.cluster.node(got->to.node).name);
    }
    const auto placed = replay.place_targets();
    if (placed.size() != problem.targets.size())
      return fmt::format("{} fits nowhere after the moves", problem.targets[placed.size()].key);
    if (placed != plan.targets) return "the targets are not placed where the plan says";
    const Cost cost = cost_of(problem, plan.moves);
    if (cost != plan.cost) return "the plan's cost is not what its moves cost";
  } catch (const std::logic_error& e) {
    return e.what();  // a card over its slices
  }
  return {};
}

}  // namespace gpuslice::defrag
