// The scheduler's winner tree against the plain answer: after any sequence
// of sets and removals, its best is the present entry with the highest
// rank, the lowest index among equal ranks.
#include "gpuslice/core/winner_tree.hpp"

#include <catch2/catch.hpp>
#include <optional>
#include <random>
#include <vector>

using gpuslice::core::WinnerTree;

namespace {

std::optional<size_t> plain_best(const std::vector<std::optional<double>>& ranks) {
  std::optional<size_t> best;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] && (!best || *ranks[i] > *ranks[*best])) best = i;
  return best;
}

}  // namespace

TEST_CASE("winner tree: empty and single entries", "[winner_tree]") {
  WinnerTree tree;
  CHECK_FALSE(tree.best());
  tree.reset(0);
  CHECK_FALSE(tree.best());
  tree.reset(1);
  CHECK_FALSE(tree.best());
  tree.set(0, -3.5);
  CHECK(tree.best() == std::optional<size_t>(0));
  tree.remove(0);
  CHECK_FALSE(tree.best());
}

TEST_CASE("winner tree: ties go to the lowest index", "[winner_tree]") {
  WinnerTree tree;
  tree.reset(5);
  tree.set(4, 7);
  tree.set(2, 7);
  tree.set(3, 7);
  CHECK(tree.best() == std::optional<size_t>(2));
  tree.set(2, 6);  // lowered: the next lowest index with 7
  CHECK(tree.best() == std::optional<size_t>(3));
  tree.set(0, 7);
  CHECK(tree.best() == std::optional<size_t>(0));
  tree.remove(0);
  tree.remove(3);
  CHECK(tree.best() == std::optional<size_t>(4));
}

TEST_CASE("winner tree: random updates match the plain scan", "[winner_tree]") {
  std::mt19937_64 rng(7);
  for (size_t n : {1u, 2u, 3u, 17u, 64u, 100u, 1213u}) {
    WinnerTree tree;
    tree.reset(n);
    std::vector<std::optional<double>> ranks(n);
    for (int step = 0; step < 4000; ++step) {
      const size_t i = rng() % n;
      if (rng() % 4 == 0) {
        tree.remove(i);
        ranks[i].reset();
      } else {
        // Few distinct ranks, so ties are common (the study's integer scores).
        const double rank = static_cast<double>(rng() % 6);
        tree.set(i, rank);
        ranks[i] = rank;
      }
      REQUIRE(tree.best() == plain_best(ranks));
    }
  }
}
