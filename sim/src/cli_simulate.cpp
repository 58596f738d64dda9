// `gpuslice simulate`: a scenario file or an openb replay.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/sim/cli.hpp"
#include "gpuslice/sim/compare.hpp"
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"
#include "gpuslice/sim/snapshot.hpp"
#include "gpuslice/sim/study.hpp"

namespace gpuslice::sim {

namespace {
struct SimulateArgs {
  std::string scenario, out, policy, openb_nodes, openb_pods, queue, pods, quotas, seeds;
  std::string preemption = "hami-aware";
  std::vector<std::string> add_nodes;
  SnapshotFlags snapshot;
  uint64_t seed = 0;
  bool seed_given = false;
  bool no_card_use = false;
  bool quiet = false;
  double tune = 1.3;
};

// A progress bar on a terminal only, without --quiet: logs and CI stay clean.
std::function<bool(double)> progress_bar(bool quiet) {
  if (quiet || !isatty(STDERR_FILENO)) return {};
  auto last = std::make_shared<int>(-1);
  return [last](double f) {
    const int pct = static_cast<int>(f * 100);
    if (pct != *last) {
      *last = pct;
      const int bar = pct / 4;
      std::cerr << fmt::format("\r[{:<25}] {:3}%", std::string(static_cast<size_t>(bar), '#'), pct)
                << std::flush;
    }
    return true;
  };
}
SnapshotRunSpec snapshot_spec(const SimulateArgs& a) {
  SnapshotRunSpec spec = snapshot_spec_of(a.snapshot);
  if (!a.pods.empty()) spec.pods = a.pods;
  if (!a.scenario.empty()) spec.pods = a.scenario;  // its pod source; the snapshot gives the fleet
  spec.add_nodes = a.add_nodes;
  return spec;
}

// "a,b,c": the policies to run, each once; a name the registry does not
// know (or one given twice) is bad input before anything runs.
std::vector<std::string> policy_list(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (true) {
    const size_t comma = text.find(',', from);
    const std::string name = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (std::string problem = core::policy_name_problem(name); !problem.empty())
      throw core::InputError("command line", 0, "--policy", problem);
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw core::InputError("command line", 0, "--policy", "'" + name + "' is given twice");
    out.push_back(name);
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

// "off", "kube,hami-aware": the preemption modes to run, each once.
std::vector<Preemption> preemption_list(const std::string& text) {
  std::vector<Preemption> out;
  size_t from = 0;
  while (true) {
    const size_t comma = text.find(',', from);
    const std::string name = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    const auto mode = parse_preemption(name);
    if (!mode)
      throw core::InputError(
          "command line", 0, "--preemption",
          fmt::format("'{}': use off, kube or hami-aware (or a list: kube,hami-aware)", name));
    if (std::find(out.begin(), out.end(), *mode) != out.end())
      throw core::InputError("command line", 0, "--preemption", "'" + name + "' is given twice");
    out.push_back(*mode);
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

// The seeds to run: --seeds (a list or ranges, docs/cli.md), else --seed,
// else the default.
std::vector<uint64_t> seed_list(const SimulateArgs& a, uint64_t default_seed) {
  if (!a.seeds.empty()) {
    if (a.seed_given)
      throw core::InputError("command line", 0, "--seeds", "give --seed or --seeds, not both");
    return parse_seed_list(a.seeds, "--seeds");
  }
  return {a.seed_given ? a.seed : default_seed};
}

// The run's input: a snapshot, a scenario or an openb replay (whose
// resampling takes openb_seed), with --quotas added.
Scenario load_input(const SimulateArgs& a, uint64_t openb_seed) {
  Scenario scenario;
  if (!a.snapshot.snapshot.empty()) {
    if (!a.openb_nodes.empty() || !a.openb_pods.empty())
      throw core::InputError("command line", 0, "--openb-nodes",
                             "give a snapshot or an openb replay, not both");
    if (!a.scenario.empty() && !a.pods.empty())
      throw core::InputError("command line", 0, "--pods", "give SCENARIO.yaml or --pods, not both");
    scenario = snapshot_scenario(snapshot_spec(a));
  } else if (!a.pods.empty() || !a.add_nodes.empty() || a.snapshot.snapshot_only_given()) {
    throw core::InputError("command line", 0, "--snapshot",
                           "--pods, --add-nodes, --cordon, --assume-duration, --device-config and "
                           "--node-groups go with --snapshot");
  } else if (!a.scenario.empty()) {
    if (!a.openb_nodes.empty() || !a.openb_pods.empty())
      throw core::InputError("command line", 0, "--openb-nodes",
                             "give a scenario or an openb replay, not both");
    scenario = load_scenario(a.scenario);
  } else {
    if (a.openb_nodes.empty() || a.openb_pods.empty())
      throw core::InputError("command line", 0, "scenario",
                             "give SCENARIO.yaml, or --openb-nodes and --openb-pods");
    OpenbOptions o;
    o.tune = a.tune;
    o.seed = openb_seed;
    scenario = openb_scenario(a.openb_nodes, a.openb_pods, o);
    scenario.policy = "hami-binpack";
  }
  if (!a.quotas.empty()) {
    std::vector<std::string> warnings;
    for (auto& q : core::codec::read_resource_quota_file(a.quotas, &warnings)) scenario.quotas.push_back(q);
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  }
  return scenario;
}

// The snapshot's pending pods whose request could not be read: a row each
// in pods.csv (refused, reason InvalidRequest, where and why in shortfall)
// and a warning on stderr. They are not in the run's counts: no pod with
// that request ever arrived at the scheduler's fit.
void add_malformed(RunResult& result, const Scenario& scenario) {
  if (!scenario.snapshot) return;
  for (const auto& m : scenario.snapshot->malformed) {
    PodRecord r;
    r.name = m.name;
    r.kind = "queue";
    r.status = "refused";
    r.reason = "InvalidRequest";
    r.origin = "queue";
    r.shortfall = m.message();
    result.pods.push_back(std::move(r));
  }
}

// What reading the input found, on stderr: the scenario's (a template's
// gpucores HAMi clamps) and the snapshot's (malformed pending pods among
// them, gpucores HAMi clamps, what was skipped), which summary.json keeps.
void warn_read(const Scenario& scenario) {
  for (const auto& w : scenario.warnings) std::cerr << "warning: " << w << "\n";
  if (!scenario.snapshot) return;
  for (const auto& w : scenario.snapshot->warnings) std::cerr << "warning: " << w << "\n";
}

void write_run(const RunResult& result, const std::string& out, bool card_use,
               const std::string& description) {
  try {
    write_outputs(result, out);
  } catch (const OutputError& e) {
    throw core::InputError("command line", 0, "--out", e.what());
  }
  if (!description.empty()) std::cout << description << "\n";
  print_table(result, std::cout);
  std::cout << "  outputs            " << out << "/{summary.json,timeline.csv,pods.csv,events.jsonl"
            << (card_use ? ",card_use.csv}\n" : "}\n");
  std::cout << "  report             " << out << "/report.html (open it in a browser)\n";
}
}  // namespace

void register_cli(CLI::App& app) {
  register_study_cli(app);
  register_report_cli(app);
  register_compare_cli(app);
  auto a = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "Replay a pod stream on a fleet with a placement policy");
  cmd->add_option("scenario", a->scenario, "scenario YAML (see docs/simulator.md)");
  cmd->add_option(
         "--out", a->out,
         "output folder (summary.json, timeline.csv, pods.csv, events.jsonl, card_use.csv, report.html)")
      ->required();
  cmd->add_option("--seed", a->seed, "random seed (default: the scenario's, else 42)")
      ->check(cli::unsigned_number());
  cmd->add_option("--seeds", a->seeds,
                  "seeds, e.g. 42-51 or 1,2,7 (docs/cli.md); several: one run each in OUT/seed<N>, then "
                  "OUT/compare.html");
  cmd->add_option("--policy,--policies", a->policy,
                  "hami-binpack | hami-spread | random | dotprod | gpupacking | gpuclustering | bestfit | "
                  "fgd | koordinator | "
                  "koordinator-most | koordinator-fixed | koordinator-most-fixed | kai-binpack | kai-spread; "
                  "several (a,b,c): one run each in OUT/<policy>, then OUT/compare.html");
  cmd->add_option("--openb-nodes", a->openb_nodes, "openb node list CSV");
  cmd->add_option("--openb-pods", a->openb_pods, "openb pod list CSV");
  cmd->add_option("--tune", a->tune,
                  "openb: resample until GPU demand reaches tune x capacity (0 < tune <= 10)");
  cmd->add_option("--queue", a->queue, "fifo | skip-ahead (default: the scenario's)");
  cmd->add_option("--preemption", a->preemption,
                  "what a pod that fits nowhere does to lower-priority pods: off | kube (kube-scheduler "
                  "counting nvidia.com/gpu slots, a HAMi cluster today) | hami-aware (HAMi's fit of the "
                  "cards, serve's preempt verb; default); several (kube,hami-aware): one run each in "
                  "OUT/<mode>, then OUT/compare.html");
  add_snapshot_flags(
      *cmd, a->snapshot,
      "start from a cluster: `kubectl get nodes,pods -A -o yaml` (or -o json) of a HAMi cluster");
  cmd->add_option("--pods", a->pods,
                  "with --snapshot: pods arriving later, a scenario file without a fleet (pods, generator or "
                  "openb_pods)");
  cmd->add_option("--add-nodes", a->add_nodes,
                  "with --snapshot: NODE.yaml:COUNT copies of a Node (repeatable)");
  cmd->add_option("--quotas", a->quotas,
                  "ResourceQuota objects (HAMi v2.10 enforces limits.nvidia.com/gpumem and gpucores per "
                  "namespace); a snapshot's own are read too");
  cmd->add_flag("--no-card-use", a->no_card_use,
                "do not keep the per-card use log (card_use.csv); saves memory on huge runs");
  cmd->add_flag("--quiet", a->quiet, "no progress bar (it is shown only when stderr is a terminal)");
  cmd->callback([a, cmd] {
    a->seed_given = cmd->count("--seed") > 0;
    if (std::string problem = tune_problem(a->tune); !problem.empty())
      throw core::InputError("command line", 0, "--tune", problem);
    const bool openb_replay = a->snapshot.snapshot.empty() && a->scenario.empty();
    if (cmd->count("--tune") > 0 && !openb_replay)
      std::cerr << "warning: --tune does nothing in this run: it resamples an --openb-nodes/--openb-pods "
                   "replay (a scenario's own trace takes openb_pods.tune)\n";
    // Before a long run, not after it: the output folder must be writable.
    try {
      prepare_output_folder(a->out);
    } catch (const OutputError& e) {
      throw core::InputError("command line", 0, "--out", e.what());
    }
    Scenario scenario = load_input(*a, seed_list(*a, 42).front());
    warn_read(scenario);
    RunOptions options = scenario_options(scenario);  // policy and seed are set per run below
    const std::vector<std::string> policies = policy_list(a->policy.empty() ? scenario.policy : a->policy);
    const std::vector<uint64_t> seeds = seed_list(*a, scenario.seed);
    if (!a->queue.empty()) {
      auto q = parse_queue(a->queue);
      if (!q) throw core::InputError("command line", 0, "--queue", "use fifo or skip-ahead");
      options.queue = *q;
    }
    options.card_use = !a->no_card_use;
    options.progress = progress_bar(a->quiet);
    const std::vector<Preemption> modes = preemption_list(a->preemption);
    // Several policies (or preemption modes): the same input once each, in
    // its own folder (OUT/<policy>, OUT/<mode>, or OUT/<policy>-<mode> for
    // both), then the comparison beside them.
    const bool several = policies.size() > 1 || modes.size() > 1 || seeds.size() > 1;
    std::vector<ComparedRun> compared;
    for (const auto& policy : policies)
      for (const Preemption mode : modes)
        for (const uint64_t seed : seeds) {
          options.policy = policy;
          options.preemption = mode;
          options.seed = seed;
          // An openb replay resamples its trace per seed, as `study` does.
          const bool reseed = openb_replay && seeds.size() > 1;
          RunResult result = simulate(reseed ? load_input(*a, seed) : scenario, options);
          if (options.progress) std::cerr << "\r" << std::string(40, ' ') << "\r";
          // The label names what varies: policy, mode, seed (joined by '-').
          std::string label;
          auto part = [&label](const std::string& p) { label += (label.empty() ? "" : "-") + p; };
          if (policies.size() > 1 || (modes.size() == 1 && seeds.size() == 1)) part(policy);
          if (modes.size() > 1) part(std::string(preemption_name(mode)));
          if (seeds.size() > 1) part(fmt::format("seed{}", seed));
          add_malformed(result, scenario);
          const std::string out = several ? (std::filesystem::path(a->out) / label).string() : a->out;
          write_run(result, out, options.card_use, scenario.description);
          if (!several) return;
          std::cout << "\n";
          // The comparison reads the summary, timeline and pods only.
          result.card_use = {};
          result.events = {};
          compared.push_back({label, out, std::move(result)});
        }
    write_and_print_comparison(compared, a->out, std::cout);
  });
}

}  // namespace gpuslice::sim
