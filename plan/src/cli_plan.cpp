// `gpuslice plan`: the smallest fleet that meets targets, by simulation.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/cli/progress.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/plan/cli.hpp"
#include "gpuslice/plan/plan.hpp"
#include "gpuslice/sim/cli.hpp"
#include "gpuslice/sim/study.hpp"

namespace gpuslice::plan {

namespace {
struct PlanArgs {
  std::string scenario, policy, gpu_policy, queue, search = "bisect", out, quotas, seeds;
  std::vector<std::string> add;
  sim::SnapshotFlags snapshot;
  std::vector<std::string> targets, vary, sets, prices;
  int min_count = 1, max_count = 0, curve_points = 8;
  bool json = false, quiet = false, autoscale = false;
};

// --out: a folder (plan.json inside, as every other --out is a folder), or a
// file path, the form plan has always taken. A folder is an existing one or
// a path ending in '/'.
std::filesystem::path plan_json_path(const std::string& out) {
  const std::filesystem::path p(out);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec) || out.back() == '/') {
    std::filesystem::create_directories(p, ec);
    return p / "plan.json";
  }
  return p;
}
}  // namespace

void register_cli(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Find the smallest fleet (count of a node template, or a mix) that meets targets, by simulation");
  cmd->add_option("scenario", a->scenario,
                  "scenario YAML whose fleet is node templates x counts (with --snapshot: its pod source)");
  sim::add_snapshot_flags(*cmd, a->snapshot,
                          "start from a cluster (kubectl get nodes,pods -A -o yaml|json): how many --add "
                          "nodes until the targets hold");
  cmd->add_option(
      "--quotas", a->quotas,
      "ResourceQuota objects (HAMi v2.10's limits.nvidia.com/gpumem and gpucores per namespace); a "
      "snapshot's own are read too");
  cmd->add_option("--add", a->add,
                  "with --snapshot: NODE.yaml, the node whose count is searched (repeatable: a mix)");
  cmd->add_option("--target", a->targets,
                  "METRIC<=VALUE, repeatable: p50|p95|p99|max_pending_s, refused_pct, failed_pct, "
                  "pending_at_end_pct or a summary field (e.g. final_alloc_gpu_pct>=50)")
      ->required();
  cmd->add_option(
      "--vary", a->vary,
      "fleet template(s) whose count is searched (default: all, as a mix; with --price, each on its own)");
  cmd->add_option(
      "--price", a->prices,
      "MODEL=COST per hour, repeatable: a node of the template so named, or a card of that GPU model "
      "(e.g. A100=3.2): the answer is then the cheapest fleet that meets the targets");
  cmd->add_option("--min", a->min_count, "smallest count tried (default 1; 0 with --snapshot)")
      ->check(cli::whole_number(0, 1'000'000));
  cmd->add_option("--max", a->max_count, "largest count tried (default 0: 4 x the scenario's, at least 16)")
      ->check(cli::whole_number(0, 1'000'000));
  cmd->add_option("--seeds,--seed", a->seeds,
                  "seeds, e.g. 1,2,3 or 42-51 (docs/cli.md); a count meets a target when every seed does");
  cmd->add_option("--policy", a->policy,
                  "placement policy (default: the scenario's); one: a plan is for one policy");
  cmd->add_option("--gpu-policy", a->gpu_policy, "HAMi GPU policy (default: the scenario's)");
  cmd->add_option("--queue", a->queue, "fifo | skip-ahead (default: the scenario's)");
  cmd->add_option("--search", a->search, "bisect (default) | scan (every count in range)");
  cmd->add_option("--curve-points", a->curve_points,
                  "extra evenly spaced counts simulated for the curve (default 8)")
      ->check(cli::whole_number(0, 10'000));
  cmd->add_option("--set", a->sets,
                  "PATH=VALUE scenario override, e.g. generator.rate_per_s=0.1 (repeatable)");
  cmd->add_option("--out", a->out,
                  "also write the result as JSON: a folder (an existing one, or a path ending in /) gets "
                  "plan.json; any other path is the file itself");
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->add_flag("--autoscale", a->autoscale,
                "search the node groups' max instead (the cheapest max per group, or combination, that meets "
                "the targets, costed by the runs: cost per day); --vary names groups");
  cmd->add_flag("--quiet", a->quiet, "no progress line (it is shown only when stderr is a terminal)");
  cmd->callback([a, cmd] {
    PlanRequest req;
    req.run.scenario.path = a->scenario;
    req.run.scenario.quotas_path = a->quotas;
    if (!a->snapshot.snapshot.empty()) {
      sim::SnapshotRunSpec snap = sim::snapshot_spec_of(a->snapshot);
      for (const auto& path : a->add) snap.add_nodes.push_back(path + ":0");
      req.run.scenario.snapshot = snap;
      if (cmd->count("--min") == 0) a->min_count = 0;  // adding none may be the answer
    } else if (a->scenario.empty()) {
      throw core::InputError("command line", 0, "scenario", "give SCENARIO.yaml, or --snapshot and --add");
    } else if (!a->add.empty() || a->snapshot.snapshot_only_given()) {
      throw core::InputError(
          "command line", 0, "--snapshot",
          "--add, --cordon, --assume-duration, --device-config and --node-groups go with --snapshot");
    }
    for (const auto& s : a->sets) {
      const auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0)
        throw core::InputError("command line", 0, "--set", fmt::format("'{}': write PATH=VALUE", s));
      const std::string value = s.substr(eq + 1);
      nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
      if (v.is_discarded()) v = value;
      req.run.scenario.overrides[s.substr(0, eq)] = v;
    }
    if (a->policy.find(',') != std::string::npos)
      throw core::InputError(
          "command line", 0, "--policy",
          fmt::format("'{}': plan takes one policy (run plan once per policy)", a->policy));
    if (!a->policy.empty()) req.run.policy = a->policy;
    if (!a->gpu_policy.empty()) req.run.gpu_policy = a->gpu_policy;
    if (!a->queue.empty()) req.run.queue = a->queue;
    for (const auto& t : a->targets) req.targets.push_back(parse_target(t));
    req.vary = a->vary;
    req.min_count = a->min_count;
    req.max_count = a->max_count;
    if (!a->seeds.empty()) req.seeds = sim::parse_seed_list(a->seeds, "--seeds");
    req.search = a->search;
    req.curve_points = a->curve_points;
    for (const auto& p : a->prices) req.prices.push_back(parse_price(p));
    req.autoscale = a->autoscale;
    cli::Progress progress("plan", a->quiet);
    std::function<bool(double)> report;
    if (progress.shown())
      report = [&progress](double done) {
        progress.fraction(done);
        return true;
      };
    const PlanResult result = plan_capacity(req, report);
    progress.finish();
    for (const auto& w : result.warnings) std::cerr << "warning: " << w << "\n";
    const auto j = to_json(result);
    if (!a->out.empty()) {
      const std::filesystem::path path = plan_json_path(a->out);
      std::ofstream f(path);
      if (!f)
        throw core::InputError("command line", 0, "--out", fmt::format("cannot write '{}'", path.string()));
      f << j.dump(2) << "\n";
    }
    if (a->json)
      std::cout << j.dump() << "\n";
    else
      std::cout << to_text(result);
    if (!result.count) throw CLI::RuntimeError(1);
  });
}

}  // namespace gpuslice::plan
