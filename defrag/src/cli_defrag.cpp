// `gpuslice defrag`: the fewest pod moves that let pending pods place.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <stdexcept>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/cli/progress.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/defrag/cli.hpp"
#include "gpuslice/defrag/defrag.hpp"
#include "gpuslice/defrag/outputs.hpp"

namespace gpuslice::defrag {

namespace {
struct DefragArgs {
  RequestWords words;
  std::vector<std::string> for_pods;
  std::string free_cards, add, out;
  bool json = false, quiet = false;
};
}  // namespace

void register_cli(CLI::App& app) {
  auto a = std::make_shared<DefragArgs>();
  auto* cmd = app.add_subcommand(
      "defrag", "The fewest pod moves (evict, let the scheduler place again) that let pending pods place");
  RequestWords& w = a->words;
  cmd->add_option("--snapshot", w.snapshot, "the cluster: kubectl get nodes,pods,pdb -A -o yaml|json")
      ->required();
  cmd->add_option("--for", a->for_pods, "NAMESPACE/POD: pending pods to place, in this order (repeatable)");
  cmd->add_flag("--for-queue", w.for_queue, "place the whole queue, in creation order (the default)");
  cmd->add_option("--free-cards", a->free_cards,
                  "N[:MODEL]: make N whole cards free (of a model: A100, T4, ...)");
  cmd->add_option("--policy", w.policy,
                  "placement policy the moves and targets are placed with (default hami)");
  cmd->add_option("--gpu-policy", w.gpu_policy, "HAMi GPU policy (default spread)");
  cmd->add_option("--max-moves", w.max_moves, "at most this many moves (default 5)");
  cmd->add_option("--movable", w.movable, "label selector of the pods that may move (e.g. 'tier!=critical')");
  cmd->add_option("--protect", w.protect, "namespaces whose pods never move (repeatable)");
  cmd->add_option(
      "--add", a->add,
      "NODE.yaml: the node plan --add counts when moves cannot place the targets (default: an empty "
      "copy of the snapshot's node that takes the most of them)");
  cmd->add_option("--search", w.search,
                  "auto (default: exact while small, else heuristic) | exact | heuristic");
  cmd->add_option(
      "--search-budget", w.search_budget,
      "scheduler decisions the exact search may make (default: 2e8 / (nodes + 100), from 20000 to 1000000)");
  cmd->add_option("--device-config", w.device_config,
                  "HAMi's device-config.yaml (request defaults, migProfileAllowlist) the snapshot is read "
                  "with; default: the Helm chart's");
  cmd->add_option("--quotas", w.quotas,
                  "ResourceQuotas (kubectl get resourcequotas -A -o yaml|json) beside the snapshot's own: "
                  "HAMi v2.10 refuses a pod its namespace has no room for");
  cmd->add_option("--out", a->out, "write moves.csv, summary.json and report.html here");
  cmd->add_flag("--json", a->json, "print summary.json's content instead of the text");
  cmd->add_flag("--strict", w.strict,
                "a pending pod whose request cannot be read is bad input (exit 2); default: it is left out "
                "with a warning and the rest is planned, as HAMi leaves it Pending");
  cmd->add_flag("--quiet", a->quiet, "no progress line (it is shown only when stderr is a terminal)");
  cmd->callback([a, cmd] {
    RequestWords words = a->words;
    if (cmd->count("--for") > 0) words.for_pods = a->for_pods;
    if (cmd->count("--free-cards") > 0) words.free_cards = a->free_cards;
    if (!a->add.empty()) words.add = a->add;
    DefragRequest request = request_of(words);
    cli::Progress progress("defrag: exact search budget", a->quiet);
    if (progress.shown()) request.search.progress = [&progress](double spent) { progress.fraction(spent); };
    const DefragResult result = defrag(request);
    progress.finish();
    for (const auto& warning : result.warnings) std::cerr << "warning: " << warning << "\n";
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
