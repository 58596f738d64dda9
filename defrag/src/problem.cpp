#include "gpuslice/defrag/problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/scheduler.hpp"

namespace gpuslice::defrag {

using core::InputError;

std::string_view pinned_text(Pinned why) {
  switch (why) {
    case Pinned::No:
      return "movable";
    case Pinned::NotRunning:
      return "not Running";
    case Pinned::Bare:
      return "bare (no controller)";
    case Pinned::NodeBound:
      return "bound to its node (DaemonSet or static pod)";
    case Pinned::Protected:
      return "in a --protect namespace";
    case Pinned::NotSelected:
      return "not matched by --movable";
    case Pinned::SeveralBudgets:
      return "under several PodDisruptionBudgets (the eviction API refuses those)";
    case Pinned::NoDisruptions:
      return "its PodDisruptionBudget allows no eviction";
  }
  return "";
}

namespace {

std::string key_of(const core::PodRequest& r) { return r.ns + "/" + r.name; }

int64_t gpu_mib_of(const core::PodAllocation& allocation) {
  int64_t mib = 0;
  for (const auto& c : core::effective_charges(allocation)) mib += c.usage.memory_mib;
  return mib;
}

// A pod asking one whole card (all its memory and cores) of `model`: a card
// fits it exactly when nothing runs there, it is healthy, not cordoned and
// of that type: "a free card", in the core's own words.
core::PodRequest whole_card_pod(int index, const std::string& model) {
  core::PodRequest p;
  p.ns = "free-cards";
  p.name = fmt::format("card-{}", index);
  core::ContainerRequest c;
  c.name = "card";
  c.count = 1;
  c.memory_percent = 100;
  c.cores = 100;
  p.containers.push_back(c);
  if (!model.empty()) p.selectors.use_types = {model};
  return p;
}

Pinned pinned_of(const RunningPod& pod, const PodFacts* facts, const ProblemOptions& options,
                 const std::vector<BudgetState>& budgets) {
  if (facts && (facts->deleting || (!facts->phase.empty() && facts->phase != "Running")))
    return Pinned::NotRunning;
  if (!facts || !facts->controller) return Pinned::Bare;
  // The DaemonSet controller pins its pods to their node (node affinity); a
  // static pod's mirror is owned by its Node: evicted, neither lands elsewhere.
  if (facts->controller->kind == "DaemonSet" || facts->controller->kind == "Node") return Pinned::NodeBound;
  if (std::find(options.protect.begin(), options.protect.end(), pod.request.ns) != options.protect.end())
    return Pinned::Protected;
  if (!options.movable.matches(facts->labels)) return Pinned::NotSelected;
  if (pod.budgets.size() > 1) return Pinned::SeveralBudgets;
  if (pod.budgets.size() == 1 && budgets[pod.budgets.front()].allowed <= 0) return Pinned::NoDisruptions;
  return Pinned::No;
}

std::string missing_pod_reason(const sim::ClusterSnapshot& snapshot, const WorkloadFacts& facts,
                               const std::string& key) {
  for (const auto& s : snapshot.starting)
    if (key_of(s.request) == key)
      return fmt::format("'{}' is already running on node '{}': only pending pods can be --for targets", key,
                         snapshot.nodes[s.node].name);
  if (auto it = facts.pods.find(key); it != facts.pods.end()) {
    const auto& phase = it->second.phase;
    if (phase == "Succeeded" || phase == "Failed")
      return fmt::format("'{}' has finished ({}): nothing to place", key, phase);
    return fmt::format(
        "'{}' does not wait for a HAMi GPU (it asks none, or is bound to a node not in the snapshot)", key);
  }
  return fmt::format("the snapshot has no pod '{}'", key);
}

std::vector<Target> targets_of(const sim::ClusterSnapshot& snapshot, const WorkloadFacts& facts,
                               const Goal& goal, const core::Cluster& cluster) {
  std::vector<Target> targets;
  switch (goal.kind) {
    case Goal::Kind::Pods: {
      if (goal.pods.empty()) throw InputError("command line", 0, "--for", "name at least one NAMESPACE/POD");
      std::set<std::string> seen;
      for (const auto& key : goal.pods) {
        if (key.find('/') == std::string::npos || key.front() == '/' || key.back() == '/')
          throw InputError("command line", 0, "--for", fmt::format("'{}': write NAMESPACE/POD", key));
        if (!seen.insert(key).second)
          throw InputError("command line", 0, "--for", fmt::format("'{}' is named twice", key));
        auto it = std::find_if(snapshot.queue.begin(), snapshot.queue.end(),
                               [&](const sim::QueuedPod& q) { return key_of(q.request) == key; });
        if (it == snapshot.queue.end())
          throw InputError(snapshot.source, 0, "--for", missing_pod_reason(snapshot, facts, key));
        targets.push_back({key, it->request});
      }
      break;
    }
    case Goal::Kind::Queue:
      for (const auto& q : snapshot.queue) targets.push_back({key_of(q.request), q.request});
      break;
    case Goal::Kind::FreeCards: {
      const core::PodRequest probe = whole_card_pod(1, goal.model);
      int cards = 0;
      for (size_t n = 0; n < cluster.size(); ++n)
        for (size_t d = 0; d < cluster.node(n).devices.size(); ++d)
          cards += core::card_admits(cluster.node(n), d, probe, probe.containers.front()) ? 1 : 0;
      if (goal.free_cards > cards)
        throw InputError(snapshot.source, 0, "--free-cards",
                         fmt::format("{} free cards asked, but the fleet has {} usable card{}{}",
                                     goal.free_cards, cards, cards == 1 ? "" : "s",
                                     goal.model.empty() ? "" : fmt::format(" of model '{}'", goal.model)));
      for (int i = 1; i <= goal.free_cards; ++i) {
        core::PodRequest p = whole_card_pod(i, goal.model);
        targets.push_back({key_of(p), std::move(p)});
      }
      break;
    }
  }
  return targets;
}

}  // namespace

Goal free_cards_goal(std::string_view text) {
  Goal g;
  g.kind = Goal::Kind::FreeCards;
  const size_t colon = text.find(':');
  const std::string_view count = text.substr(0, colon);
  int n = 0;
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (ec != std::errc() || end != count.data() + count.size() || n < 1 || n > 1000000)
    throw InputError(
        "command line", 0, "--free-cards",
        fmt::format("'{}': write N or N:MODEL with N a whole number from 1 (e.g. 2:A100)", text));
  g.free_cards = n;
  if (colon != std::string_view::npos) {
    g.model = std::string(text.substr(colon + 1));
    if (g.model.empty())
      throw InputError("command line", 0, "--free-cards",
                       fmt::format("'{}': the model after ':' is empty", text));
  }
  return g;
}

Built build_problem(const sim::ClusterSnapshot& snapshot, const WorkloadFacts& facts, const Goal& goal,
                    const ProblemOptions& options) {
  if (std::string problem = core::policy_name_problem(options.policy); !problem.empty())
    throw InputError("command line", 0, "--policy", problem);
  if (options.policy == "random")
    throw InputError(
        "command line", 0, "--policy",
        "random draws nodes by chance, so a plan replayed under it would not be the plan: choose a "
        "deterministic policy");
  if (std::string problem = core::gpu_policy_problem(options.gpu_policy); !problem.empty())
    throw InputError("command line", 0, "--gpu-policy", problem);

  Built built;
  Problem& p = built.problem;
  for (const auto& n : snapshot.nodes) p.cluster.add_node(n);
  Budgets budgets = evaluate_budgets(facts);
  p.budgets = std::move(budgets.states);
  p.quotas = snapshot.quotas;
  for (const auto& s : snapshot.starting) {
    p.cluster.charge(s.node, s.allocation, s.request.host);
    if (s.allocation.empty()) continue;  // holds no card: nothing a move would free
    RunningPod r;
    r.key = key_of(s.request);
    r.request = s.request;
    r.node = s.node;
    r.allocation = s.allocation;
    r.gpu_mib = gpu_mib_of(s.allocation);
    const auto it = facts.pods.find(r.key);
    const PodFacts* f = it == facts.pods.end() ? nullptr : &it->second;
    if (auto b = budgets.of_pod.find(r.key); b != budgets.of_pod.end()) r.budgets = b->second;
    r.pinned = pinned_of(r, f, options, p.budgets);
    p.pods.push_back(std::move(r));
  }

  p.policy = options.policy;
  p.policy_args.gpu_policy = options.gpu_policy;
  // FGD's typical pods, counted as the simulator counts them on a snapshot:
  // the running GPU pods and the queue.
  p.policy_args.typical_pods =
      core::typical_pods(p.pods.size() + snapshot.queue.size(), [&](size_t i) -> const core::PodRequest& {
        return i < p.pods.size() ? p.pods[i].request : snapshot.queue[i - p.pods.size()].request;
      });

  p.targets = targets_of(snapshot, facts, goal, p.cluster);
  if (goal.kind == Goal::Kind::Queue) {
    // Fits a node of the fleet with nothing running there, or no move helps.
    auto policy = p.make_policy();
    core::Cluster empty = p.cluster;
    empty.clear_usage();
    core::Scheduler scheduler;
    std::vector<Target> kept;
    for (auto& t : p.targets) {
      if (scheduler.place(empty, t.request, *policy, core::Detail::Minimal).placed())
        kept.push_back(std::move(t));
      else
        built.never_fits.push_back(t.key);
    }
    p.targets = std::move(kept);
  }
  return built;
}

}  // namespace gpuslice::defrag
