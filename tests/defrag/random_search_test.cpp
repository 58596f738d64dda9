// Randomised small clusters: the exact search against a brute force over
// every move sequence (no pruning at all), and the heuristic against both.
// The heuristic must never return a plan that does not replay, never beat
// the true minimum, and never claim a minimum it has not proven.
#include <catch2/catch.hpp>
#include <random>

#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/defrag/search.hpp"
#include "replay_check.hpp"

using namespace gpuslice;
using namespace gpuslice::defrag;

namespace {

core::PodRequest gpu_pod(const std::string& name, int64_t mib, int32_t cores) {
  core::PodRequest p;
  p.ns = "t";
  p.name = name;
  core::ContainerRequest c;
  c.name = "main";
  c.count = 1;
  c.memory_mib = mib;
  c.cores = cores;
  p.containers.push_back(c);
  return p;
}

Problem random_problem(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Problem p;
  const char* policies[] = {"hami-binpack", "hami-spread", "bestfit", "fgd", "gpupacking"};
  p.policy = policies[pick(0, 4)];
  const int nodes = pick(2, 4);
  for (int n = 0; n < nodes; ++n) {
    core::Node node;
    node.name = "n" + std::to_string(n);
    const int cards = pick(1, 2);
    const int64_t mib = 8000 * pick(2, 5);
    for (int d = 0; d < cards; ++d) {
      core::Device dev;
      dev.uuid = "GPU-" + node.name + "-" + std::to_string(d);
      dev.index = d;
      dev.type = "NVIDIA-TEST";
      dev.slots = 4;
      dev.memory_mib = mib;
      dev.cores = 100;
      dev.healthy = true;
      node.devices.push_back(dev);
    }
    p.cluster.add_node(node);
  }
  // Running pods, each on a random node where the core fits it.
  const int pods = pick(3, 9);
  core::FitScratch scratch;
  const core::GpuPolicy spread = core::GpuPolicy::parse("spread");
  for (int i = 0; i < pods; ++i) {
    core::PodRequest r = gpu_pod("run-" + std::to_string(i), 2000 * pick(1, 8), 10 * pick(0, 5));
    const size_t n = static_cast<size_t>(pick(0, nodes - 1));
    const auto fit = core::fit_pod(p.cluster.view(n), r, spread, scratch);
    if (!fit.fits) continue;
    p.cluster.charge(n, fit.allocation, r.host);
    RunningPod rp;
    rp.key = "t/" + r.name;
    rp.request = r;
    rp.node = n;
    rp.allocation = fit.allocation;
    rp.gpu_mib = r.containers[0].memory_mib;
    rp.pinned = pick(0, 9) < 8 ? Pinned::No : Pinned::Bare;
    p.pods.push_back(std::move(rp));
  }
  if (p.pods.size() >= 3 && pick(0, 2) == 0) {  // a budget over two pods allowing one eviction
    p.budgets.push_back({"t", "b", 2, 2, 2, 1, 1});
    p.pods[0].budgets = {0};
    p.pods[1].budgets = {0};
  }
  const int targets = pick(1, 2);
  for (int i = 0; i < targets; ++i) {
    core::PodRequest r = gpu_pod("want-" + std::to_string(i), 4000 * pick(2, 8), 10 * pick(0, 6));
    p.targets.push_back({"t/" + r.name, r});
  }
  std::vector<core::PodRequest> seen;
  for (const auto& rp : p.pods) seen.push_back(rp.request);
  for (const auto& t : p.targets) seen.push_back(t.request);
  p.policy_args.typical_pods = core::typical_pods(seen);
  return p;
}

// Every sequence of up to `max_moves` moves (no-ops and all), the cheapest
// that places the targets.
struct Brute {
  explicit Brute(const Problem& problem) : p(problem), replay(problem) {}
  const Problem& p;
  Replay replay;
  std::optional<Cost> best;
  void walk(int left) {
    auto placed = replay.place_targets();
    if (placed.size() == p.targets.size()) {
      const Cost c = cost_of(p, replay.moves());
      if (!best || c < *best) best = c;
    }
    replay.remove_targets(placed);
    if (left == 0) return;
    for (uint32_t i = 0; i < p.pods.size(); ++i) {
      if (!replay.move(i)) continue;
      walk(left - 1);
      replay.undo();
    }
  }
};

}  // namespace

TEST_CASE("randomised: exact equals brute force, the heuristic never lies", "[defrag][random]") {
  std::mt19937_64 rng(20261124);
  const int max_moves = 3;
  int with_plan = 0, with_moves = 0, heuristic_found = 0, heuristic_proven = 0;
  for (int round = 0; round < 600; ++round) {
    const Problem p = random_problem(rng);
    INFO("round " << round << " policy " << p.policy << " pods " << p.pods.size());
    Brute brute(p);
    brute.walk(max_moves);

    SearchOptions o;
    o.max_moves = max_moves;
    o.method = SearchOptions::Method::Exact;
    o.exact_budget = 10'000'000;
    const SearchResult exact = search(p, o);
    REQUIRE_FALSE(exact.exact_gave_up);
    REQUIRE(exact.proven_minimal);
    REQUIRE(exact.plan.has_value() == brute.best.has_value());
    if (exact.plan) {
      ++with_plan;
      with_moves += exact.plan->cost.moves > 0 ? 1 : 0;
      CHECK(exact.plan->cost == *brute.best);
      CHECK(exact.ties_exhaustive);
      defrag_test::replay_step_by_step(p, *exact.plan);
    } else {
      CHECK(exact.lower_bound > max_moves);
    }

    o.method = SearchOptions::Method::Heuristic;
    const SearchResult h = search(p, o);
    if (h.plan) {
      ++heuristic_found;
      REQUIRE(brute.best);
      CHECK(check_plan(p, *h.plan).empty());
      defrag_test::replay_step_by_step(p, *h.plan);
      CHECK(h.plan->cost.moves >= brute.best->moves);
      if (h.proven_minimal) {
        ++heuristic_proven;
        CHECK(h.plan->cost.moves == brute.best->moves);
      }
      CHECK_FALSE(h.ties_exhaustive);
    } else if (h.proven_minimal) {
      CHECK_FALSE(brute.best);  // "no plan within max_moves" must be true
    }
    CHECK(h.lower_bound <= (brute.best ? static_cast<int>(brute.best->moves) : max_moves + 1));
  }
  INFO("plans " << with_plan << ", with moves " << with_moves << ", heuristic found " << heuristic_found
                << ", proven " << heuristic_proven);
  // The draws exercise the interesting cases, not only trivial ones.
  CHECK(with_moves >= 30);
  CHECK(with_plan > with_moves);
  CHECK(heuristic_found >= 30);
  CHECK(heuristic_proven >= 20);
}
