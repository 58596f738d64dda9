// Cluster Autoscaler's dry-run filter (docs/serve.md#cluster-autoscaler): a
// `Nodes` request naming a node serve does not know is CA simulating a
// scale-up. Known nodes are decided among as a real filter decides, the
// others are fitted from their own objects (template_nodes.hpp); nothing is
// reserved, patched, recorded or dropped, so no later answer changes.
#include <unordered_set>

#include "filter_steps.hpp"
#include "gpuslice/core/dialects/hami/policy.hpp"
#include "template_nodes.hpp"

namespace gpuslice::serve {

bool DecisionState::holds_unknown_node(const ExtenderArgs& args) const {
  if (!args.nodes_form) return false;  // kube-scheduler with nodeCacheCapable: names only
  std::lock_guard lock(mutex_);
  for (const auto& name : args.node_names)
    if (!cluster_.find(name) && !nodes_.count(name)) return true;
  return false;
}

ExtenderFilterResult DecisionState::dry_run_filter(const FilterPod& pod, const ExtenderArgs& args,
                                                   FilterOutcome& outcome) {
  ExtenderFilterResult result;
  std::lock_guard lock(mutex_);
  if (!ready_) {
    outcome = FilterOutcome::Error;
    result.error = "the extender has not read the cluster yet";
    return result;
  }
  outcome = FilterOutcome::DryRun;
  expire();  // what any call at this time would return; nothing of this pod is dropped
  const auto t = now();

  // Each name once: the feed's nodes (with cards, or not) and the others.
  Candidates known;
  std::vector<size_t> simulated;  // positions in the request
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < args.node_names.size(); ++i) {
    const std::string& name = args.node_names[i];
    if (!seen.insert(name).second) continue;
    if (const auto id = cluster_.find(name); id && !cluster_.node(*id).devices.empty())
      known.ids.push_back(*id);
    else if (id || nodes_.count(name))
      known.unregistered.insert(name);
    else
      simulated.push_back(i);
  }

  std::vector<std::string> fitting;
  // Known nodes: the node a real filter would choose, at the cluster's
  // usage, nothing reserved. A policy that draws lots draws from a copy of
  // its own, so that the live one's draws are not moved.
  if (known.asked() > 0) {
    core::Decision decision;
    if (!known.ids.empty()) {
      std::unique_ptr<core::Policy> copy;
      if (policy_->lottery())
        copy = options_.policy == "hami" ? std::make_unique<core::HamiPolicy>()
                                         : core::make_policy(options_.policy);
      const core::Detail detail =
          known.ids.size() <= options_.full_report_nodes ? core::Detail::Full : core::Detail::Minimal;
      decision = scheduler_.place_among(cluster_, known.ids, known.asked(), pod.request,
                                        copy ? *copy : *policy_, detail);
    }
    if (decision.placed())
      fitting.push_back(cluster_.node(*decision.node).name);
    else
      write_refusal(known, decision, result);
  }

  // Simulated nodes: each from its object, with the pods CA packed onto it.
  std::optional<std::pair<size_t, core::PodAllocation>>
      first_fit;  // a simulated node that fits, and its cards
  for (const size_t i : simulated) {
    const std::string& name = args.node_names[i];
    if (i >= args.node_items.size()) {  // an ExtenderArgs built without its objects
      result.failed[name] = "node unregistered";
      continue;
    }
    TemplateNodes::Fit fit = templates_->fit(name, args.node_items[i], pod.request, pod.key, t);
    if (fit.fits) {
      fitting.push_back(name);
      if (!first_fit) first_fit.emplace(i, std::move(fit.allocation));
    } else {
      result.failed[name] = fit.reason;
    }
  }
  // CA adds the pod to the node it chose: serve knows which when only one fits.
  if (fitting.size() == 1 && first_fit)
    templates_->pack(args.node_names[first_fit->first], pod.request, pod.key, first_fit->second, t);

  if (!fitting.empty()) result.nodes = std::move(fitting);
  return result;
}

}  // namespace gpuslice::serve
