// Capacity planning: the smallest fleet (count of a node template, or a mix
// of templates in fixed proportions) that meets targets such as "p95 pending
// under 60 s" or "no more than 1% refused", by search over simulations.
// Shared by `gpuslice plan` and gpuslice.plan_capacity() in Python; also the
// one place that turns a run description (scenario file or text, openb
// replay, overrides, policy, seed) into a simulator run, so the CLI and the
// Python module build runs the same way `gpuslice simulate` does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/plan/price.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"
#include "gpuslice/sim/snapshot.hpp"

namespace gpuslice::plan {

// Where a run's scenario comes from: a scenario file, a scenario text (YAML,
// or JSON, which is YAML too), or an openb replay.
struct ScenarioSource {
  std::string path;                     // scenario YAML file
  std::optional<std::string> text;      // or its text ...
  std::string source = "<scenario>";    // ... named so in error messages
  std::string base_dir = ".";           // ... with relative file references resolved here
  std::string openb_nodes, openb_pods;  // or an openb replay (both files)
  double tune = 1.3;                    // openb: resample to tune x capacity
  // A scenario with openb_pods: replaces its tune (an error for other pod sources).
  std::optional<double> scenario_tune;
  // Dotted paths into the scenario's YAML set to JSON values before it is
  // parsed: {"generator.rate_per_s": 0.05, "fleet.0.count": 12}.
  nlohmann::json overrides = nlohmann::json::object();
  // Or a cluster snapshot (gpuslice simulate --snapshot): its nodes, pods
  // and queue; added node files become the fleet groups a plan varies.
  std::optional<sim::SnapshotRunSpec> snapshot;
  // ResourceQuota objects (--quotas FILE) added to whatever the scenario or
  // snapshot sets (HAMi v2.10's namespace quotas); empty: none.
  std::string quotas_path;
};

struct RunSpec {
  ScenarioSource scenario;
  std::optional<std::string> policy;      // default: the scenario's
  std::optional<std::string> gpu_policy;  // default: the scenario's
  std::optional<std::string> queue;       // fifo | skip-ahead; default: the scenario's
  std::optional<uint64_t> seed;           // default: the scenario's (openb: 42)
};

// The scenario text after overrides (throws InputError for a bad path).
std::string apply_overrides(const std::string& yaml_text, const nlohmann::json& overrides,
                            const std::string& source);
// The scenario of a run (reads files; throws core::InputError for bad input).
sim::Scenario load(const RunSpec& spec);
// The run options of a run, as `gpuslice simulate` derives them (validates names).
sim::RunOptions options_for(const sim::Scenario& scenario, const RunSpec& spec);
// load + options_for + simulate. progress: as RunOptions::progress.
sim::RunResult run(const RunSpec& spec, std::function<bool(double)> progress = {});

// A target on a run's summary: "p95_pending_s<=60", "refused_pct<=1".
struct Target {
  std::string metric;
  std::string op;  // <= | < | >= | >
  double value = 0;
  bool met_by(double v) const;
  bool lower_is_better() const { return op[0] == '<'; }
  std::string text() const;
};
Target parse_target(std::string_view text);  // throws InputError
// Metrics: p50_pending_s p95_pending_s p99_pending_s max_pending_s refused_pct
// failed_pct pending_at_end_pct, or any numeric summary field by dotted path.
double metric(const nlohmann::ordered_json& summary, const std::string& name);
std::vector<std::string> standard_metrics();

struct PlanRequest {
  RunSpec run;  // the base scenario: its fleet must be templates x counts
  // Or the base scenario itself, built in memory (gpuslice defrag's
  // targets on a snapshot); run then gives only the policy and seeds.
  std::optional<sim::Scenario> scenario;
  std::vector<Target> targets;
  // Fleet templates whose count is searched (by template name); empty: all.
  // Several: a mix, kept in the proportions of their counts in the scenario.
  std::vector<std::string> vary;
  int min_count = 1;              // a snapshot may start at 0 (nodes added)
  int max_count = 0;              // 0: 4 x the scenario's count (at least 16)
  std::vector<uint64_t> seeds;    // a count meets a target when every seed does
  std::string search = "bisect";  // bisect (metrics assumed monotone in the count) | scan
  int curve_points = 8;           // extra evenly spaced counts for the curve (bisect)
  // Given: the cheapest fleet that meets the targets instead of the smallest;
  // each varied template's count (0..max) is then searched on its own.
  std::vector<Price> prices;
  // plan --autoscale: the scenario's node groups' `max` is what is searched
  // (vary names groups), each fleet costed by its run: the groups'
  // node-hours x price_per_hour over the simulated time, per hour.
  bool autoscale = false;
};

struct PlanPoint {
  int count = 0;                      // nodes over the varied templates
  std::map<std::string, int> counts;  // per template
  bool meets = false;
  nlohmann::ordered_json metrics;                 // worst over seeds, standard metrics + targets'
  std::map<std::string, double> target_values;    // each target's metric, worst over seeds (by its text)
  std::vector<nlohmann::ordered_json> summaries;  // one per seed
  std::optional<double> cost;                     // per hour, when priced (autoscale: the worst seed's)
};

struct PlanResult {
  std::optional<int> count;           // smallest count that meets every target
  std::map<std::string, int> counts;  // its mix
  std::vector<Target> targets;
  std::vector<std::string> vary;
  std::vector<uint64_t> seeds;
  std::string policy;
  std::string scenario;
  int min_count = 0, max_count = 0;
  std::vector<PlanPoint> points;  // every fleet simulated, by count (priced: by cost)
  bool interrupted = false;
  std::map<std::string, double> node_prices;  // priced: a node of each varied template, per hour
  std::optional<double> cost;                 // priced: the answer's, per hour
  // plan --autoscale: counts are each node group's max, node_prices its
  // price_per_hour, costs the runs' (x 24 for a day).
  bool autoscale = false;
  // What the user should know about how the request was read (an
  // ambiguous --price key, ...): printed on stderr by the CLI.
  std::vector<std::string> warnings;
  // Pods no count of the varied templates places (they fit no node of the
  // largest fleet tried, even empty): "ns/pod (reason: shortfall)". The
  // targets are judged on the other pods.
  std::vector<std::string> never_placeable;
};

// Priced plans: the fleets cheaper than the answer that were tried and miss
// the targets, the dearest first (at most `n`): how close a cheaper fleet
// comes. Every fleet tried when there is no answer.
std::vector<const PlanPoint*> cheaper_misses(const PlanResult& result, size_t n);
// A missed target and by how much: "p95_pending_s 84.2 (target <= 60, 24.2 over)".
std::vector<std::string> misses(const PlanPoint& point, const std::vector<Target>& targets);

// should_continue: called between and during runs with the fraction of
// simulations done; returning false stops the search (result.interrupted).
PlanResult plan_capacity(const PlanRequest& request, std::function<bool(double)> should_continue = {});
nlohmann::ordered_json to_json(const PlanResult& result);
std::string to_text(const PlanResult& result);

}  // namespace gpuslice::plan
