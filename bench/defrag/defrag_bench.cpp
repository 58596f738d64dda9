// gpuslice defrag benchmarks (figures for docs/defrag.md, not tests):
//
//   defrag_bench known              the hand-built snapshots of tests/defrag/data, whose minimum
//                                   is known (1, 2, 3 moves; none within 5; a budget forbidding
//                                   the obvious move): the plan found, whether it is proven
//                                   minimal, and the time, exact and heuristic
//   defrag_bench dump FILE POD [max-moves]
//                                   a plan for one pending pod (namespace/name) of a dump
//                                   (kubectl get nodes,pods,pdb -A -o json|yaml): reading the
//                                   file and the plan timed apart (the goal: the plan within 2 s
//                                   beyond reading on the 4,000-node dump)
//   defrag_bench write FILE [nodes] [tight]
//                                   the synthetic fleet below as `kubectl get nodes,pods,pdb -A
//                                   -o json` (its pods with ReplicaSet owners and labels, two
//                                   daemon pods per node, the 70000 MiB pod ml/finetune-70g
//                                   pending, a PodDisruptionBudget per 100 ReplicaSets), for
//                                   `dump`
//   defrag_bench synthetic [nodes] [max-moves] [tight]
//                                   the same question on a fleet built in memory (8 x 80 GB
//                                   cards per node, 1 to 3 pods per card, every card short of
//                                   70000 MiB free), without a file to read; tight: 2 or 3
//                                   pods of 12000 MiB or more per card, so no single move
//                                   gives the pod room (the exact search cannot finish at
//                                   4,000 nodes and the heuristic answers)
//
// Times are wall seconds of one run on this machine (best of 3 for known).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/defrag/defrag.hpp"
#include "gpuslice/defrag/outputs.hpp"
#include "measure.hpp"

using namespace gpuslice;
using namespace gpuslice::defrag;

namespace {

using gpuslice::bench::peak_rss_mib;
using gpuslice::bench::seconds_since;

void print_result(const char* what, const SearchResult& r, double seconds) {
  fmt::print("  {:<10} {:>6} {:>9} {:>8} {:>7} {:>10} {:>11} {:>9.4f}\n", what,
             r.plan ? fmt::format("{}", r.plan->cost.moves) : std::string("none"),
             r.plan ? fmt::format("{}", r.plan->cost.mib) : std::string("-"), r.proven_minimal ? "yes" : "no",
             r.impossible ? std::string("inf") : fmt::format("{}", r.lower_bound), r.method, r.placements,
             seconds);
}

int known() {
  const std::string dir = std::string(GPUSLICE_SOURCE_DIR) + "/tests/defrag/data/";
  struct Case {
    const char* file;
    int max_moves;
    const char* known;
  };
  const Case cases[] = {
      {"one-move.yaml", 5, "1 move"},     {"two-moves.yaml", 5, "2 moves"},
      {"three-moves.yaml", 5, "3 moves"}, {"six-moves.yaml", 5, "none within 5 (6 needed)"},
      {"six-moves.yaml", 6, "6 moves"},   {"budget-forbids.yaml", 5, "2 moves (not the budget's pod)"}};
  fmt::print("hand-built snapshots (best of 3 per search)\n");
  fmt::print("  {:<10} {:>6} {:>9} {:>8} {:>7} {:>10} {:>11} {:>9}\n", "search", "moves", "MiB", "proven",
             "bound", "method", "placements", "seconds");
  for (const Case& c : cases) {
    const Input in = load_input(dir + c.file);
    const Built b = build_problem(in.snapshot, in.facts, Goal{}, {});
    fmt::print("{} --max-moves {}: known answer {}\n", c.file, c.max_moves, c.known);
    for (auto method : {SearchOptions::Method::Exact, SearchOptions::Method::Heuristic}) {
      SearchOptions o;
      o.max_moves = c.max_moves;
      o.method = method;
      double best = 1e300;
      SearchResult r;
      for (int i = 0; i < 3; ++i) {
        const auto t = std::chrono::steady_clock::now();
        r = search(b.problem, o);
        best = std::min(best, seconds_since(t));
      }
      print_result(method == SearchOptions::Method::Exact ? "exact" : "heuristic", r, best);
      if (r.plan) {
        std::string pods;
        for (const auto& m : r.plan->moves) pods += (pods.empty() ? "" : ", ") + b.problem.pods[m.pod].key;
        fmt::print("  {:<10} moves {}\n", "", pods);
      }
    }
  }
  return 0;
}

int dump(const std::string& path, const std::string& pod, int max_moves) {
  auto t = std::chrono::steady_clock::now();
  const Input in = load_input(path);
  const double read = seconds_since(t);
  fmt::print(
      "{}: read in {:.2f} s ({} nodes, {} running pods, {} pending, {} budgets), peak RSS {:.0f} MiB\n", path,
      read, in.snapshot.nodes.size(), in.snapshot.starting.size(), in.snapshot.queue.size(),
      in.facts.budgets.size(), peak_rss_mib());
  DefragRequest req;
  req.snapshot = path;
  req.goal.kind = Goal::Kind::Pods;
  req.goal.pods = {pod};
  req.search.max_moves = max_moves;
  t = std::chrono::steady_clock::now();
  const DefragResult r = gpuslice::defrag::defrag(in, req, read);
  const double total = seconds_since(t);
  fmt::print("{}", to_text(r));
  fmt::print(
      "beyond reading: {:.3f} s (problem {:.3f} s, search {:.3f} s, plan --add {:.3f} s); {} placements, {} "
      "states; peak RSS {:.0f} MiB\n",
      total, total - r.search_seconds - r.add_seconds, r.search_seconds, r.add_seconds, r.search.placements,
      r.search.states, peak_rss_mib());
  return 0;
}

// 8 cards of 80 GB per node; per card 1 to 3 running pods (all owned by a
// ReplicaSet) holding 12000 to 60000 MiB together, so no card has the
// 70000 MiB the pending pod asks; 3 % of the pods are bare. Tight: 2 or 3
// pods of 12000 to 20000 MiB per card.
Problem synthetic_problem(size_t nodes, bool tight) {
  std::mt19937_64 rng(4000);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Problem p;
  for (size_t n = 0; n < nodes; ++n) {
    core::Node node;
    node.name = fmt::format("gpu-{:05}", n);
    for (int d = 0; d < 8; ++d)
      node.devices.push_back(
          core::healthy_card(fmt::format("GPU-{}-{}", node.name, d), d, "NVIDIA-A100-SXM4-80GB", 10, 81920));
    p.cluster.add_node(node);
  }
  for (size_t n = 0; n < nodes; ++n)
    for (int d = 0; d < 8; ++d) {
      const int pods = tight ? pick(2, 3) : pick(1, 3);
      std::vector<int64_t> sizes;
      int64_t total = 0;
      for (int i = 0; i < pods; ++i) {
        sizes.push_back(tight ? 12000 + 2000 * pick(0, 4) : 4000 * pick(1, 5));
        total += sizes.back();
      }
      if (total < 12000) sizes.back() += 12000 - total + 2000 * pick(0, 4);  // every card short of 70000 free
      for (int i = 0; i < pods; ++i) {
        const int64_t mib = sizes[static_cast<size_t>(i)];
        core::PodRequest r;
        r.ns = "ml";
        r.name = fmt::format("job-{}-{}-{}", n, d, i);
        core::ContainerRequest c;
        c.name = "main";
        c.count = 1;
        c.memory_mib = mib;
        c.cores = 10 * pick(0, 3);
        r.containers.push_back(c);
        core::PodAllocation a;
        a.containers = {{core::DeviceGrant{d, mib, c.cores}}};
        p.cluster.charge(n, a, r.host);
        RunningPod rp;
        rp.key = r.ns + "/" + r.name;
        rp.request = r;
        rp.node = n;
        rp.allocation = a;
        rp.gpu_mib = mib;
        rp.pinned = pick(0, 99) < 3 ? Pinned::Bare : Pinned::No;
        p.pods.push_back(std::move(rp));
      }
    }
  core::PodRequest t;
  t.ns = "ml";
  t.name = "finetune";
  core::ContainerRequest c;
  c.name = "main";
  c.count = 1;
  c.memory_mib = 70000;
  c.cores = 60;
  t.containers.push_back(c);
  p.targets.push_back({"ml/finetune", t});
  p.policy = "hami";
  return p;
}

// The synthetic problem as a kubectl JSON dump. Pods keep their names; each
// running GPU pod belongs to a ReplicaSet of its own name's first part
// ("job-<node>" for the pods of a node), bare ones have no owner.
int write_dump(const std::string& path, size_t nodes, bool tight) {
  using nlohmann::ordered_json;
  const Problem p = synthetic_problem(nodes, tight);
  ordered_json items = ordered_json::array();
  for (size_t n = 0; n < p.cluster.size(); ++n) {
    const core::Node& node = p.cluster.node(n);
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", node.name},
           {"labels", {{"kubernetes.io/hostname", node.name}, {"gpu", "on"}}},
           {"annotations",
            {{std::string(core::codec::kRegisterAnnotation),
              core::codec::encode_registration_json(node.devices)}}}}},
         {"status", {{"allocatable", {{"cpu", "128"}, {"memory", "1048576Mi"}, {"pods", "110"}}}}}});
  }
  for (const RunningPod& r : p.pods) {
    const core::Node& node = p.cluster.node(r.node);
    const std::string set = "job-" + r.request.name.substr(4, r.request.name.find('-', 4) - 4);
    ordered_json meta = {{"name", r.request.name},
                         {"namespace", r.request.ns},
                         {"labels", {{"app", set}}},
                         {"annotations",
                          {{std::string(core::codec::kAssignedNodeAnnotation), node.name},
                           {std::string(core::codec::kAllocatedAnnotation),
                            core::codec::encode_allocation(r.allocation, node)}}}};
    if (r.movable())
      meta["ownerReferences"] = ordered_json::array({{{"apiVersion", "apps/v1"},
                                                      {"kind", "ReplicaSet"},
                                                      {"name", set},
                                                      {"uid", "uid-" + set},
                                                      {"controller", true}}});
    const auto& c = r.request.containers.front();
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", meta},
                     {"spec",
                      {{"nodeName", node.name},
                       {"containers",
                        ordered_json::array({{{"name", "main"},
                                              {"resources",
                                               {{"limits",
                                                 {{"nvidia.com/gpu", "1"},
                                                  {"nvidia.com/gpumem", std::to_string(c.memory_mib)},
                                                  {"nvidia.com/gpucores", std::to_string(c.cores)}}}}}}})}}},
                     {"status",
                      {{"phase", "Running"},
                       {"conditions", ordered_json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  }
  for (size_t n = 0; n < p.cluster.size(); ++n)
    for (const char* daemon : {"node-exporter", "hami-device-plugin"})
      items.push_back(
          {{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", fmt::format("{}-{}", daemon, n)},
             {"namespace", "kube-system"},
             {"ownerReferences", ordered_json::array({{{"apiVersion", "apps/v1"},
                                                       {"kind", "DaemonSet"},
                                                       {"name", daemon},
                                                       {"uid", std::string("uid-") + daemon},
                                                       {"controller", true}}})}}},
           {"spec",
            {{"nodeName", p.cluster.node(n).name},
             {"containers", ordered_json::array(
                                {{{"name", "main"},
                                  {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}}})}}},
           {"status", {{"phase", "Running"}}}});
  items.push_back(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", "finetune-70g"}, {"namespace", "ml"}, {"creationTimestamp", "2026-11-24T09:00:00Z"}}},
       {"spec",
        {{"containers", ordered_json::array({{{"name", "main"},
                                              {"resources",
                                               {{"limits",
                                                 {{"nvidia.com/gpu", "1"},
                                                  {"nvidia.com/gpumem", "70000"},
                                                  {"nvidia.com/gpucores", "60"}}}}}}})}}},
       {"status", {{"phase", "Pending"}}}});
  for (size_t n = 0; n < p.cluster.size(); n += 100)
    items.push_back(
        {{"apiVersion", "policy/v1"},
         {"kind", "PodDisruptionBudget"},
         {"metadata", {{"name", fmt::format("job-{}", n)}, {"namespace", "ml"}}},
         {"spec",
          {{"minAvailable", "50%"}, {"selector", {{"matchLabels", {{"app", fmt::format("job-{}", n)}}}}}}}});
  std::ofstream f(path);
  f << ordered_json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump(1) << "\n";
  if (!f.flush()) throw std::runtime_error("cannot write " + path);
  fmt::print("{}: {} nodes, {} GPU pods running, {} daemon pods, 1 pending (ml/finetune-70g, 70000 MiB)\n",
             path, nodes, p.pods.size(), 2 * nodes);
  return 0;
}

int synthetic(size_t nodes, int max_moves, bool tight) {
  auto t = std::chrono::steady_clock::now();
  const Problem p = synthetic_problem(nodes, tight);
  fmt::print(
      "synthetic{}: {} nodes, {} cards, {} running pods, one 70000 MiB pod pending; built in {:.2f} s\n",
      tight ? " (tight)" : "", nodes, p.cluster.device_count(), p.pods.size(), seconds_since(t));
  fmt::print("  {:<10} {:>6} {:>9} {:>8} {:>7} {:>10} {:>11} {:>9}\n", "search", "moves", "MiB", "proven",
             "bound", "method", "placements", "seconds");
  for (auto method : {SearchOptions::Method::Auto, SearchOptions::Method::Heuristic}) {
    SearchOptions o;
    o.max_moves = max_moves;
    o.method = method;
    t = std::chrono::steady_clock::now();
    const SearchResult r = search(p, o);
    print_result(method == SearchOptions::Method::Auto ? "auto" : "heuristic", r, seconds_since(t));
  }
  fmt::print("peak RSS {:.0f} MiB\n", peak_rss_mib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "known";
  try {
    if (mode == "known") return known();
    if (mode == "dump" && argc >= 4) return dump(argv[2], argv[3], argc > 4 ? std::stoi(argv[4]) : 5);
    if (mode == "write" && argc >= 3)
      return write_dump(argv[2], argc > 3 ? std::stoul(argv[3]) : 4000,
                        argc > 4 && std::string(argv[4]) == "tight");
    if (mode == "synthetic")
      return synthetic(argc > 2 ? std::stoul(argv[2]) : 4000, argc > 3 ? std::stoi(argv[3]) : 5,
                       argc > 4 && std::string(argv[4]) == "tight");
  } catch (const std::exception& e) {
    fmt::print(stderr, "defrag_bench: {}\n", e.what());
    return 2;
  }
  fmt::print(
      stderr,
      "usage: defrag_bench known | dump FILE NAMESPACE/POD [max-moves] | synthetic [nodes] [max-moves] "
      "[tight]\n");
  return 2;
}
