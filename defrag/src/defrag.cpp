#include "gpuslice/defrag/defrag.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/hami/device_config.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/defrag/replay.hpp"

namespace gpuslice::defrag {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether the pod fits `node` with nothing running there.
bool fits_empty(const core::Node& node, const core::PodRequest& pod, core::Policy& policy) {
  core::Cluster one;
  core::Node copy = node;
  copy.cordoned_uuids.clear();
  one.add_node(std::move(copy));
  core::Scheduler scheduler;
  return scheduler.place(one, pod, policy, core::Detail::Minimal).placed();
}

// The snapshot node whose empty copy takes the most of the pods (the first
// such node in the snapshot).
std::optional<size_t> best_template(const Problem& p, const std::vector<core::PodRequest>& pods) {
  auto policy = p.make_policy();
  std::optional<size_t> best;
  size_t best_fits = 0;
  for (size_t n = 0; n < p.cluster.size(); ++n) {
    if (p.cluster.node(n).devices.empty()) continue;
    size_t fits = 0;
    for (const auto& pod : pods) fits += fits_empty(p.cluster.node(n), pod, *policy) ? 1 : 0;
    if (!best || fits > best_fits) {
      best = n;
      best_fits = fits;
    }
  }
  return best;
}

sim::FleetGroup copy_group(const core::Node& node, const std::vector<core::Node>& snapshot_nodes) {
  sim::FleetGroup g;
  g.node.name = "like-" + node.name;
  auto clashes = [&](const std::string& name) {
    for (const auto& n : snapshot_nodes)
      if (n.name.rfind(name + "-", 0) == 0) return true;
    return false;
  };
  for (int i = 2; clashes(g.node.name); ++i) g.node.name = fmt::format("like{}-{}", i, node.name);
  g.count = 0;
  g.node.cards = static_cast<int>(node.devices.size());
  g.prototype = node;
  g.prototype->cordoned_uuids.clear();
  return g;
}

// `plan --snapshot CLUSTER --add NODE --target failed_pct<=0` with the
// targets as the queue: the fewest added nodes on which the targets place
// now (nothing running leaves), by the planner's own search.
AddInstead add_instead(const Input& input, const DefragRequest& request, const Built& built,
                       std::optional<sim::FleetGroup> given) {
  const Problem& p = built.problem;
  AddInstead a;
  std::vector<core::PodRequest> pods;
  for (const auto& t : p.targets) pods.push_back(t.request);
  std::vector<core::PodRequest> never;
  for (const auto& key : built.never_fits)
    for (const auto& q : input.snapshot.queue)
      if (q.request.ns + "/" + q.request.name == key) never.push_back(q.request);

  sim::FleetGroup group;
  if (given) {
    group = std::move(*given);
    a.from = *request.add;
  } else {
    std::vector<core::PodRequest> all = pods;
    all.insert(all.end(), never.begin(), never.end());
    const auto n = best_template(p, all);
    if (!n) throw core::InputError(request.snapshot, 0, "nodes", "the snapshot has no GPU node to copy");
    group = copy_group(p.cluster.node(*n), input.snapshot.nodes);
    a.from = fmt::format("an empty copy of node {}", p.cluster.node(*n).name);
  }
  a.template_name = group.node.name;

  sim::Scenario s;
  s.name = std::filesystem::path(request.snapshot).stem().string();
  s.description = fmt::format("defrag {}: what adding nodes would take instead of moves", request.snapshot);
  s.policy = p.policy;
  s.gpu_policy = p.policy_args.gpu_policy;
  s.queue = sim::QueueDiscipline::SkipAhead;
  sim::ClusterSnapshot snap = input.snapshot;
  for (auto& st : snap.starting) st.duration = sim::kForever;  // the question is "now": nothing leaves
  snap.queue.clear();
  for (const auto& t : p.targets) {
    snap.queue.push_back({t.request, sim::kForever, {}, false, {}, {}});
    a.targets.push_back(t.key);
  }
  {
    auto policy = p.make_policy();
    const core::Node& tpl = *group.prototype;
    for (size_t i = 0; i < never.size(); ++i) {
      const std::string& key = built.never_fits[i];
      if (fits_empty(tpl, never[i], *policy)) {
        snap.queue.push_back({never[i], sim::kForever, {}, false, {}, {}});
        a.targets.push_back(key);
      } else {
        a.left_out.push_back(key);
      }
    }
  }
  s.snapshot = std::move(snap);
  s.fleet_groups.push_back(std::move(group));
  sim::set_fleet_counts(s, {}, {});

  plan::PlanRequest req;
  req.scenario = std::move(s);
  req.run.policy = p.policy;
  req.run.gpu_policy = p.policy_args.gpu_policy;
  req.targets = {plan::parse_target("failed_pct<=0")};
  req.min_count = 0;
  // Each target fits one added node alone, so one node per target suffices.
  req.max_count = std::max<int>(1, static_cast<int>(a.targets.size()));
  req.curve_points = 0;
  a.max_count = req.max_count;
  if (!a.targets.empty()) {
    a.plan = plan::plan_capacity(req);
    a.count = a.plan.count;
  } else {
    a.count = std::nullopt;
  }
  return a;
}

}  // namespace

DefragRequest request_of(const RequestWords& w) {
  DefragRequest req;
  req.snapshot = w.snapshot;
  const int goals = (w.for_pods ? 1 : 0) + (w.for_queue ? 1 : 0) + (w.free_cards ? 1 : 0);
  if (goals > 1)
    throw core::InputError("command line", 0, "--for", "give one of --for, --for-queue and --free-cards");
  if (w.for_pods) {
    req.goal.kind = Goal::Kind::Pods;
    req.goal.pods = *w.for_pods;
  } else if (w.free_cards) {
    req.goal = free_cards_goal(*w.free_cards);
  }
  req.options.policy = w.policy;
  req.options.gpu_policy = w.gpu_policy;
  req.options.protect = w.protect;
  try {
    req.options.movable = parse_label_selector(w.movable);
  } catch (const std::invalid_argument& e) {
    throw core::InputError("command line", 0, "--movable", fmt::format("'{}': {}", w.movable, e.what()));
  }
  if (w.max_moves < 0 || w.max_moves > 1000)
    throw core::InputError("command line", 0, "--max-moves", "must be a whole number from 0 to 1000");
  req.search.max_moves = w.max_moves;
  req.search.exact_budget = w.search_budget;
  if (w.search == "auto")
    req.search.method = SearchOptions::Method::Auto;
  else if (w.search == "exact")
    req.search.method = SearchOptions::Method::Exact;
  else if (w.search == "heuristic")
    req.search.method = SearchOptions::Method::Heuristic;
  else
    throw core::InputError("command line", 0, "--search",
                           fmt::format("'{}': use auto, exact or heuristic", w.search));
  req.add = w.add;
  req.device_config = w.device_config;
  req.quotas = w.quotas;
  req.strict = w.strict;
  return req;
}

DefragResult defrag(const Input& input, const DefragRequest& request, double read_seconds) {
  DefragResult r;
  r.snapshot = request.snapshot;
  r.request = request;
  r.read_seconds = read_seconds;
  r.warnings = input.warnings;
  if (request.search.max_moves < 0 || request.search.max_moves > 1000)
    throw core::InputError("command line", 0, "--max-moves", "must be a whole number from 0 to 1000");
  if (request.snapshot.empty())
    throw core::InputError("command line", 0, "--snapshot", "name the cluster snapshot");
  r.built = build_problem(input.snapshot, input.facts, request.goal, request.options);
  if (!r.built.problem.quotas.empty()) {
    const Replay as_is(r.built.problem);
    for (const auto& t : r.built.problem.targets)
      if (std::string over = as_is.quota_shortfall(t.request); !over.empty())
        r.warnings.push_back(
            fmt::format("{}: {}; moves keep each namespace's total, so none can place it", t.key, over));
  }
  // A bad --add file is bad input whether or not it is needed.
  std::optional<sim::FleetGroup> given;
  if (request.add) given = sim::added_node_group(*request.add, 0, input.snapshot.nodes, {});
  const auto start = std::chrono::steady_clock::now();
  r.search = search(r.built.problem, request.search);
  r.search_seconds = seconds_since(start);
  if (!r.search.plan) {
    const auto add_start = std::chrono::steady_clock::now();
    r.add = add_instead(input, request, r.built, std::move(given));
    r.add_seconds = seconds_since(add_start);
  }
  return r;
}

DefragResult defrag(const DefragRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  core::codec::RequestDefaults defaults;
  if (!request.device_config.empty())
    defaults = core::codec::parse_device_config(core::codec::read_text_file(request.device_config),
                                                request.device_config)
                   .requests;
  Input input = load_input(request.snapshot, defaults);
  if (request.strict && !input.snapshot.malformed.empty()) input.snapshot.malformed.front().raise();
  if (!request.quotas.empty())
    for (auto& q : core::codec::read_resource_quota_file(request.quotas, &input.warnings))
      input.snapshot.quotas.push_back(std::move(q));
  return defrag(input, request, seconds_since(start));
}

}  // namespace gpuslice::defrag
