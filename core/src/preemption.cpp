#include "gpuslice/core/preemption.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpuslice/core/gpu_policy.hpp"

namespace gpuslice::core {

namespace {

// The cards a pod asks for in all: init containers run one after another
// (their peak), app containers together (their sum), as kube-scheduler
// counts an extended resource.
int64_t cards_asked(const PodRequest& pod) {
  int64_t init_peak = 0, apps = 0;
  for (const auto& c : pod.init_containers) init_peak = std::max<int64_t>(init_peak, c.count);
  for (const auto& c : pod.containers) apps += c.count;
  return std::max(init_peak, apps);
}

}  // namespace

VictimSelector::VictimSelector(const Cluster& cluster, Policy& policy, FitRule rule)
    : cluster_(cluster), policy_(policy), rule_(rule) {}

void VictimSelector::load(size_t node, const PodRequest& pod) {
  if (rule_ == FitRule::Devices && !policy_.device_fit()) {
    std::string text = policy_.gpu_policy_for(pod);
    if (text != gpu_text_) {
      gpu_ = GpuPolicy::parse(text);
      gpu_text_ = std::move(text);
    }
  }
  node_ = node;
  const auto usage = cluster_.usage(node);
  usage_.assign(usage.begin(), usage.end());
  host_ = cluster_.host_used(node);
  // The view keeps the node's version: fits read the usage it carries, and
  // the one cache keyed by version (FGD's fragment) belongs to scoring,
  // never asked here.
  view_ = cluster_.view(node);
  view_.usage = usage_;
}

std::span<const DeviceCharge> VictimSelector::charges_of(const RunningPod& pod,
                                                         std::vector<DeviceCharge>& scratch) const {
  if (!pod.charges.empty()) return pod.charges;
  scratch = effective_charges(pod.allocation, cluster_.node(node_).devices);
  return scratch;
}

// Adds (+1) or takes away (-1) what `pod` holds, as Cluster::charge and
// release count it (add_charge: its MIG slices too). Taking away more than the node holds means the caller
// offered a pod the cluster never charged there: refused, not clamped.
void VictimSelector::apply(const RunningPod& pod, std::span<const DeviceCharge> charges, int sign) {
  const Node& node = cluster_.node(node_);
  for (const DeviceCharge& c : charges) {
    if (c.device < 0 || static_cast<size_t>(c.device) >= usage_.size())
      throw std::invalid_argument(
          fmt::format("preemption: pod '{}' holds card {} of node '{}', which has {} cards", pod.id, c.device,
                      node.name, usage_.size()));
    DeviceUsage& u = usage_[static_cast<size_t>(c.device)];
    if (sign < 0 && !holds_charge(u, c.usage))
      throw std::invalid_argument(
          fmt::format("preemption: pod '{}' holds more of node '{}' card {} than the cluster charged there",
                      pod.id, node.name, c.device));
    add_charge(u, c.usage, sign);
  }
  host_.cpu_milli += sign * pod.host.cpu_milli;
  host_.memory_mib += sign * pod.host.memory_mib;
  if (host_.cpu_milli < 0 || host_.memory_mib < 0)
    throw std::invalid_argument(fmt::format(
        "preemption: pod '{}' holds more host CPU or memory of node '{}' than the cluster charged", pod.id,
        node.name));
}

// The node as it would be with the pods taken away so far.
bool VictimSelector::fits_now(const PodRequest& pod) {
  NodeView& view = view_;
  view.host_used = host_;
  if (rule_ == FitRule::HostOnly) return !host_shortfall(view, pod).any();
  if (rule_ == FitRule::SlotCount) {
    if (host_shortfall(view, pod).any()) return false;
    int64_t free_slots = 0;
    for (size_t d = 0; d < view.device_count(); ++d)
      free_slots += std::max<int64_t>(0, view.device(d).slots - usage_[d].slots);
    return free_slots >= cards_asked(pod);
  }
  if (DeviceFit* dialect = policy_.device_fit()) return dialect->fits(view, pod);
  return pod_fits(view, pod, gpu_, scratch_);
}

bool VictimSelector::fits_without(const PreemptionQuestion& question, size_t node,
                                  std::span<const uint32_t> evicted) {
  load(node, question.pod);
  if (computed_.empty()) computed_.resize(1);
  for (const uint32_t i : evicted)
    apply(question.running.at(i), charges_of(question.running.at(i), computed_[0]), -1);
  return fits_now(question.pod);
}

NodeVerdict VictimSelector::select(const PreemptionQuestion& question, size_t node,
                                   std::span<const uint32_t> on_node) {
  NodeVerdict verdict;
  verdict.victims.node = node;
  const auto& running = question.running;
  // Only pods of lower priority may be evicted (isPreemptionAllowed).
  order_.clear();
  for (const uint32_t i : on_node) {
    const RunningPod& pod = running.at(i);
    if (pod.node != node)
      throw std::invalid_argument(fmt::format(
          "preemption: pod '{}' is offered on node '{}' but runs on '{}'", pod.id, cluster_.node(node).name,
          pod.node < cluster_.size() ? cluster_.node(pod.node).name : "?"));
    if (pod.priority < question.priority) order_.push_back(i);
  }
  if (order_.empty()) {
    verdict.outcome = NodeOutcome::NoLowerPriority;
    return verdict;
  }
  // Most important first; kube-scheduler's sort is not stable, ours keeps
  // the offered order among equals so answers repeat. (kube-scheduler sorts
  // after the check below; the order does not change that check.)
  // An insertion sort: stable, and a node runs a handful of pods.
  for (size_t k = 1; k < order_.size(); ++k) {
    const uint32_t moving = order_[k];
    size_t j = k;
    for (; j > 0 && more_important(running[moving], running[order_[j - 1]]); --j) order_[j] = order_[j - 1];
    order_[j] = moving;
  }
  // Remove them all; no fit then means no eviction here helps. Each pod's
  // charges are worked out once (charges_[k] for order_[k]): it may leave
  // and come back. From here pods are named by their place k in order_.
  load(node, question.pod);
  if (computed_.size() < order_.size()) computed_.resize(order_.size());
  charges_.resize(order_.size());
  for (size_t k = 0; k < order_.size(); ++k) {
    charges_[k] = charges_of(running[order_[k]], computed_[k]);
    apply(running[order_[k]], charges_[k], -1);
  }
  if (!fits_now(question.pod)) {
    verdict.outcome = NodeOutcome::NoRoom;
    return verdict;
  }
  // filterPodsWithPDBViolation: walking that order, each budget counting
  // the pod gives up one disruption; a pod driving any budget below zero
  // would violate it.
  allowed_.assign(question.budgets.begin(), question.budgets.end());
  violating_.clear();
  non_violating_.clear();
  for (uint32_t k = 0; k < order_.size(); ++k) {
    const RunningPod& pod = running[order_[k]];
    bool violates = false;
    for (const uint32_t b : pod.budgets) {
      if (b >= allowed_.size())
        throw std::invalid_argument(
            fmt::format("preemption: pod '{}' names budget {} of {}", pod.id, b, allowed_.size()));
      if (--allowed_[b] < 0) violates = true;
    }
    (violates ? violating_ : non_violating_).push_back(k);
  }
  // Reprieve: put each back, the budget-violating ones first; one that
  // leaves the pod without room goes again and is a victim.
  victims_.clear();
  auto reprieve = [&](uint32_t k) {
    apply(running[order_[k]], charges_[k], +1);
    if (fits_now(question.pod)) return true;
    apply(running[order_[k]], charges_[k], -1);
    victims_.push_back(k);
    return false;
  };
  int64_t violations = 0;
  for (const uint32_t k : violating_)
    if (!reprieve(k)) ++violations;
  for (const uint32_t k : non_violating_) reprieve(k);
  // Positions in order_ sort as importance does: the victims most important
  // first whichever group they came from.
  if (!violating_.empty() && !non_violating_.empty()) std::sort(victims_.begin(), victims_.end());
  for (uint32_t& k : victims_) k = order_[k];
  verdict.outcome = victims_.empty() ? NodeOutcome::FitsAlready : NodeOutcome::Victims;
  verdict.victims.victims = victims_;
  verdict.victims.pdb_violations = violations;
  return verdict;
}

VictimsScore score_victims(const NodeVictims& node, std::span<const RunningPod> running) {
  VictimsScore score;
  score.pdb_violations = node.pdb_violations;
  const RunningPod& first = running[node.victims.front()];
  score.top_priority = first.priority;
  // Shifted by 2^31 so every term is positive: a few negative-priority
  // victims never beat fewer of the same priority.
  for (const uint32_t v : node.victims)
    score.shifted_sum += static_cast<int64_t>(running[v].priority) + (int64_t{1} << 31);
  score.count = static_cast<int32_t>(node.victims.size());
  // GetEarliestPodStartTime: the earliest start among the highest-priority
  // victims. Nanoseconds, as Go compares.
  int32_t top = first.priority;
  double earliest = first.start_time;
  for (const uint32_t v : node.victims) {
    const RunningPod& p = running[v];
    if (p.priority > top) {
      top = p.priority;
      earliest = p.start_time;
    } else if (p.priority == top) {
      earliest = std::min(earliest, p.start_time);
    }
  }
  score.earliest_top_ns = static_cast<int64_t>(earliest * 1e9);
  return score;
}

bool preferred_victims(const VictimsScore& a, const VictimsScore& b) {
  // kube-scheduler keeps the nodes best by each comparison in turn until
  // one is left, else takes the first: the first node best in this order.
  if (a.pdb_violations != b.pdb_violations) return a.pdb_violations < b.pdb_violations;
  if (a.top_priority != b.top_priority) return a.top_priority < b.top_priority;
  if (a.shifted_sum != b.shifted_sum) return a.shifted_sum < b.shifted_sum;
  if (a.count != b.count) return a.count < b.count;
  // The node whose earliest top victim started latest.
  return a.earliest_top_ns > b.earliest_top_ns;
}

std::optional<size_t> pick_one_node(std::span<const VictimsScore> nodes) {
  if (nodes.empty()) return std::nullopt;
  size_t best = 0;
  for (size_t i = 1; i < nodes.size(); ++i)
    if (preferred_victims(nodes[i], nodes[best])) best = i;
  return best;
}

std::optional<size_t> pick_one_node(std::span<const NodeVictims> nodes, std::span<const RunningPod> running) {
  std::vector<VictimsScore> scores;
  scores.reserve(nodes.size());
  for (const NodeVictims& n : nodes) scores.push_back(score_victims(n, running));
  return pick_one_node(scores);
}

PreemptionPlan plan_preemption(const Cluster& cluster, const PreemptionQuestion& question, Policy& policy,
                               std::span<const size_t> candidates, FitRule rule) {
  PreemptionPlan plan;
  if (question.preempt_never) {
    plan.eligible = false;  // PodEligibleToPreemptOthers
    return plan;
  }
  std::vector<std::vector<uint32_t>> on_node(cluster.size());
  for (uint32_t i = 0; i < question.running.size(); ++i) {
    const size_t node = question.running[i].node;
    if (node >= cluster.size())
      throw std::invalid_argument(fmt::format("preemption: pod '{}' runs on node {} of {}",
                                              question.running[i].id, node, cluster.size()));
    on_node[node].push_back(i);
  }
  VictimSelector selector(cluster, policy, rule);
  auto consider = [&](size_t node) {
    NodeVerdict verdict = selector.select(question, node, on_node[node]);
    if (verdict.outcome == NodeOutcome::Victims) plan.nodes.push_back(std::move(verdict.victims));
  };
  if (candidates.empty()) {
    for (size_t node = 0; node < cluster.size(); ++node) consider(node);
  } else {
    for (const size_t node : candidates) {
      if (node >= cluster.size())
        throw std::invalid_argument(fmt::format("preemption: candidate node {} of {}", node, cluster.size()));
      consider(node);
    }
  }
  plan.chosen = pick_one_node(plan.nodes, question.running);
  return plan;
}

}  // namespace gpuslice::core
