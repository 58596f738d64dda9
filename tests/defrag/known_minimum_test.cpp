// Hand-built snapshots whose minimum is worked out in their header comments
// (tests/defrag/data): the search must return that plan, proven minimal,
// and the plan must replay step by step on the core.
#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/defrag/input.hpp"
#include "gpuslice/defrag/search.hpp"
#include "replay_check.hpp"

using namespace gpuslice;
using namespace gpuslice::defrag;

namespace {

std::string data(const std::string& name) {
  return std::string(GPUSLICE_SOURCE_DIR) + "/tests/defrag/data/" + name;
}

struct Solved {
  Built built;
  SearchResult result;
};

Solved solve(const Input& in, int max_moves, SearchOptions::Method method, Goal goal = {}) {
  Solved s{build_problem(in.snapshot, in.facts, goal, {}), {}};
  SearchOptions o;
  o.max_moves = max_moves;
  o.method = method;
  s.result = search(s.built.problem, o);
  return s;
}

std::vector<std::string> moved(const Solved& s) {
  std::vector<std::string> out;
  for (const auto& m : s.result.plan->moves) out.push_back(s.built.problem.pods[m.pod].key);
  return out;
}

const auto kBoth = {SearchOptions::Method::Exact, SearchOptions::Method::Heuristic};

}  // namespace

TEST_CASE("1, 2 and 3 moves: the proven-minimal plan, replayed step by step", "[defrag]") {
  const std::vector<std::tuple<const char*, size_t, int64_t, std::vector<std::string>>> cases = {
      {"one-move.yaml", 1, 20000, {"ml/small-1"}},
      {"two-moves.yaml", 2, 40000, {"ml/small-1", "ml/small-2"}},
      {"three-moves.yaml", 3, 45000, {"ml/small-1", "ml/small-2", "ml/small-3"}},
  };
  for (const auto& [file, moves, mib, pods] : cases) {
    const Input in = load_input(data(file));
    for (auto method : kBoth) {
      INFO(file << (method == SearchOptions::Method::Exact ? " exact" : " heuristic"));
      const Solved s = solve(in, 5, method);
      REQUIRE(s.result.plan);
      CHECK(s.result.plan->cost.moves == moves);
      CHECK(s.result.plan->cost.mib == mib);
      CHECK(s.result.plan->cost.nodes == 2);
      CHECK(s.result.proven_minimal);
      CHECK(s.result.lower_bound == static_cast<int>(moves));
      CHECK(moved(s) == pods);
      CHECK(s.built.problem.cluster.node(s.result.plan->targets.at(0).node).name == "a100-a");
      CHECK(check_plan(s.built.problem, *s.result.plan).empty());
      defrag_test::replay_step_by_step(s.built.problem, *s.result.plan);
    }
  }
}

TEST_CASE("impossible within 5 moves, proven - 6 moves when allowed", "[defrag]") {
  const Input in = load_input(data("six-moves.yaml"));
  for (auto method : kBoth) {
    const Solved five = solve(in, 5, method);
    CHECK_FALSE(five.result.plan);
    CHECK(five.result.proven_minimal);  // none within 5, proven
    CHECK(five.result.lower_bound == 6);
    CHECK_FALSE(five.result.impossible);
  }
  const Solved six = solve(in, 6, SearchOptions::Method::Auto);
  REQUIRE(six.result.plan);
  CHECK(six.result.plan->cost.moves == 6);
  CHECK(six.result.proven_minimal);
  defrag_test::replay_step_by_step(six.built.problem, *six.result.plan);
}

TEST_CASE("a PodDisruptionBudget forbids the obvious move", "[defrag]") {
  Input in = load_input(data("budget-forbids.yaml"));
  for (auto method : kBoth) {
    const Solved s = solve(in, 5, method);
    REQUIRE(s.result.plan);
    CHECK(moved(s) == std::vector<std::string>{"ml/small-1", "ml/small-2"});
    CHECK(s.result.proven_minimal);
    defrag_test::replay_step_by_step(s.built.problem, *s.result.plan);
  }
  // Without the budget the obvious move is the plan: one move.
  in.facts.budgets.clear();
  const Solved free = solve(in, 5, SearchOptions::Method::Exact);
  REQUIRE(free.result.plan);
  CHECK(moved(free) == std::vector<std::string>{"serving/llm-0"});
}

TEST_CASE("the bundled example: no sequence of moves places the 70000 MiB fine-tune", "[defrag]") {
  const Input in = load_input(std::string(GPUSLICE_SOURCE_DIR) + "/examples/snapshot/cluster.yaml");
  Goal goal;
  goal.kind = Goal::Kind::Pods;
  goal.pods = {"ml/finetune-7b-0"};
  const Solved s = solve(in, 5, SearchOptions::Method::Auto, goal);
  CHECK_FALSE(s.result.plan);
  CHECK(s.result.impossible);
  CHECK(s.result.method == "exact");
  // Two A100 pods have controllers; the rest are bare pods.
  size_t movable = 0;
  for (const auto& p : s.built.problem.pods) movable += p.movable() ? 1 : 0;
  CHECK(movable == 2);
}

TEST_CASE("free cards: whole cards emptied, cordoned cards never count", "[defrag]") {
  const Input in = load_input(data("one-move.yaml"));
  const Solved one = solve(in, 5, SearchOptions::Method::Auto, free_cards_goal("1:A100"));
  REQUIRE(one.result.plan);
  CHECK(one.result.plan->cost.moves == 1);
  defrag_test::replay_step_by_step(one.built.problem, *one.result.plan);
  // a100-b's cards hold bare pods: at most the two a100-a cards can be freed,
  // and a100-b takes only one 20000 MiB pod per card.
  const Solved two = solve(in, 5, SearchOptions::Method::Auto, free_cards_goal("2:A100"));
  REQUIRE(two.result.plan);
  CHECK(two.result.plan->cost.moves == 2);
  const Solved three = solve(in, 5, SearchOptions::Method::Auto, free_cards_goal("3"));
  CHECK_FALSE(three.result.plan);
  CHECK(three.result.proven_minimal);  // none within 5, proven by the exact search
  CHECK(three.result.method == "exact");
  // six-moves.yaml's a100-a card 1 is cordoned: 7 usable cards of 8.
  const Input six = load_input(data("six-moves.yaml"));
  CHECK_THROWS_WITH(build_problem(six.snapshot, six.facts, free_cards_goal("8"), {}),
                    Catch::Contains("the fleet has 7 usable cards"));
}
