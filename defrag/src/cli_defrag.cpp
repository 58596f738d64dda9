// `gpuslice defrag`: the fewest pod moves that let pending pods place.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <stdexcept>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/defrag/cli.hpp"
#include "gpuslice/defrag/defrag.hpp"
#include "gpuslice/defrag/outputs.hpp"

namespace gpuslice::defrag {

namespace {
struct DefragArgs {
  std::string snapshot, free_cards, policy = "hami", gpu_policy = "spread", movable, out, add,
                                    method = "auto";
  std::vector<std::string> for_pods, protect;
  bool for_queue = false, json = false;
  int max_moves = 5;
  uint64_t budget = SearchOptions{}.exact_budget;
};
}  // namespace

void register_cli(CLI::App& app) {
  auto a = std::make_shared<DefragArgs>();
  auto* cmd = app.add_subcommand(
      "defrag", "The fewest pod moves (evict, let the scheduler place again) that let pending pods place");
  cmd->add_option("--snapshot", a->snapshot, "the cluster: kubectl get nodes,pods,pdb -A -o yaml|json")
      ->required();
  cmd->add_option("--for", a->for_pods, "NAMESPACE/POD: pending pods to place, in this order (repeatable)");
  cmd->add_flag("--for-queue", a->for_queue, "place the whole queue, in creation order (the default)");
  cmd->add_option("--free-cards", a->free_cards,
                  "N[:MODEL]: make N whole cards free (of a model: A100, T4, ...)");
  cmd->add_option("--policy", a->policy,
                  "placement policy the moves and targets are placed with (default hami)");
  cmd->add_option("--gpu-policy", a->gpu_policy, "HAMi GPU policy (default spread)");
  cmd->add_option("--max-moves", a->max_moves, "at most this many moves (default 5)");
  cmd->add_option("--movable", a->movable,
                  "label selector of the pods that may move (e.g. 'tier!=critical')");
  cmd->add_option("--protect", a->protect, "namespaces whose pods never move (repeatable)");
  cmd->add_option(
      "--add", a->add,
      "NODE.yaml: the node plan --add counts when moves cannot place the targets (default: an empty "
      "copy of the snapshot's node that takes the most of them)");
  cmd->add_option("--search", a->method,
                  "auto (default: exact while small, else heuristic) | exact | heuristic");
  cmd->add_option("--search-budget", a->budget,
                  "scheduler decisions the exact search may make (default 200000)");
  cmd->add_option("--out", a->out, "write moves.csv, summary.json and report.html here");
  cmd->add_flag("--json", a->json, "print summary.json's content instead of the text");
  cmd->callback([a, cmd] {
    DefragRequest req;
    req.snapshot = a->snapshot;
    const int goals = (cmd->count("--for") > 0) + (a->for_queue ? 1 : 0) + (cmd->count("--free-cards") > 0);
    if (goals > 1)
      throw core::InputError("command line", 0, "--for", "give one of --for, --for-queue and --free-cards");
    if (cmd->count("--for") > 0) {
      req.goal.kind = Goal::Kind::Pods;
      req.goal.pods = a->for_pods;
    } else if (cmd->count("--free-cards") > 0) {
      req.goal = free_cards_goal(a->free_cards);
    }
    req.options.policy = a->policy;
    req.options.gpu_policy = a->gpu_policy;
    req.options.protect = a->protect;
    try {
      req.options.movable = parse_label_selector(a->movable);
    } catch (const std::invalid_argument& e) {
      throw core::InputError("command line", 0, "--movable", fmt::format("'{}': {}", a->movable, e.what()));
    }
    if (cmd->count("--max-moves") && (a->max_moves < 0 || a->max_moves > 1000))
      throw core::InputError("command line", 0, "--max-moves", "must be a whole number from 0 to 1000");
    req.search.max_moves = a->max_moves;
    req.search.exact_budget = a->budget;
    if (a->method == "auto")
      req.search.method = SearchOptions::Method::Auto;
    else if (a->method == "exact")
      req.search.method = SearchOptions::Method::Exact;
    else if (a->method == "heuristic")
      req.search.method = SearchOptions::Method::Heuristic;
    else
      throw core::InputError("command line", 0, "--search",
                             fmt::format("'{}': use auto, exact or heuristic", a->method));
    if (!a->add.empty()) req.add = a->add;
    const DefragResult result = defrag(req);
    for (const auto& w : result.warnings) std::cerr << "warning: " << w << "\n";
    if (!a->out.empty()) write_outputs(result, a->out);
    if (a->json)
      std::cout << summary_json(result).dump() << "\n";
    else
      std::cout << to_text(result);
    if (!a->out.empty() && !a->json)
      std::cout << fmt::format("wrote {}/moves.csv, summary.json, report.html\n", a->out);
    if (!result.search.plan) throw CLI::RuntimeError(1);
  });
}

}  // namespace gpuslice::defrag
