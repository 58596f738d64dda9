#include "gpuslice/core/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpuslice::core {

namespace {

// A share: one container asking for part of one card. The FGD family may
// put it on any card that fits; HAMi's fit picks one by its card order.
const ContainerRequest* share_request(const PodRequest& pod, size_t& container_index) {
  const ContainerRequest* found = nullptr;
  for (size_t i = 0; i < pod.container_count(); ++i) {
    const auto& c = pod.container_at(i);
    if (!c.wants_devices()) continue;
    if (found) return nullptr;
    found = &c;
    container_index = i;
  }
  if (!found || found->count != 1) return nullptr;
  const bool whole_memory = found->memory_mib == 0 && found->memory_percent == 100;
  const bool whole = whole_memory && found->cores >= 100;
  return whole ? nullptr : found;
}

// Cheap necessary condition for fit_pod: enough cards that could each take
// the container alone. Lets the ranked path skip full nodes in a few
// integer compares; fit_pod still decides.
bool may_fit(const NodeView& node, const PodRequest& pod) {
  const auto& cap = node.node->capacity;
  if (cap.cpu_milli > 0 && node.host_used.cpu_milli + pod.host.cpu_milli > cap.cpu_milli) return false;
  if (cap.memory_mib > 0 && node.host_used.memory_mib + pod.host.memory_mib > cap.memory_mib) return false;
  for (size_t c = 0; c < pod.container_count(); ++c) {
    const auto& req = pod.container_at(c);
    if (!req.wants_devices()) continue;
    const int32_t cores = std::min<int32_t>(req.cores, 100);
    int candidates = 0;
    for (size_t i = 0; i < node.device_count(); ++i) {
      const auto& d = node.device(i);
      const auto& u = node.usage[i];
      if (d.vendor == req.vendor && d.healthy && u.slots < d.slots && d.memory_mib - u.memory_mib >= req.memory_on(d.memory_mib) &&
          d.cores - u.cores >= cores && !(cores == 100 && d.cores == 100 && u.slots > 0))
        ++candidates;
    }
    if (candidates < req.count) return false;
  }
  return true;
}

struct Best {
  bool found = false;
  size_t node = 0;
  NodeScore score;
  PodAllocation allocation;
};

}  // namespace

Decision Scheduler::place_by_rank(const Cluster& cluster, const PodRequest& pod, Policy& policy) const {
  Decision decision;
  order_.sync(cluster, policy);
  const GpuPolicy gpu = GpuPolicy::parse(policy.gpu_policy_for(pod));
  order_.visit_in_rank_order(policy.rank_sign(pod), pod, [&](size_t id, double key) {
    const NodeView view = cluster.view(id);
    if (!may_fit(view, pod)) return false;
    FitResult fit = fit_pod(view, pod, gpu, scratch_);
    if (!fit.fits) return false;
    decision.node = id;
    decision.score = key;
    decision.allocation = std::move(fit.allocation);
    return true;
  });
  return decision;
}

Decision Scheduler::place(const Cluster& cluster, const PodRequest& pod, Policy& policy,
                          Detail detail) const {
  if (detail == Detail::Minimal && policy.pod_independent_score()) return place_by_rank(cluster, pod, policy);
  Decision decision;
  const GpuPolicy gpu = GpuPolicy::parse(policy.gpu_policy_for(pod));
  size_t share_index = 0;
  const ContainerRequest* share = policy.chooses_share_card() ? share_request(pod, share_index) : nullptr;
  const bool full = detail == Detail::Full;

  Best best;
  auto consider = [&](size_t id, const NodeScore& s, const PodAllocation& a) {
    if (full) decision.fitting.push_back({id, s});
    // Strictly better only: among equal ranks the node listed first wins.
    if (!best.found || s.rank > best.score.rank) {
      best.found = true;
      best.node = id;
      best.score = s;
      best.allocation = a;
    }
  };

  for (size_t id = 0; id < cluster.size(); ++id) {
    const NodeView view = cluster.view(id);
    FitResult fit = fit_pod(view, pod, gpu, scratch_);
    if (!fit.fits) {
      if (full) decision.failed.emplace_back(id, std::move(fit.reason));
      continue;
    }
    if (!share) {
      consider(id, policy.score(view, pod, fit.allocation), fit.allocation);
      continue;
    }
    // The policy chooses the card: score each fitting card, keep the best.
    PodAllocation candidate = fit.allocation;
    auto& grants = candidate.containers[share_index];
    bool have = false;
    NodeScore node_best;
    PodAllocation node_alloc;
    for (int card : fitting_cards(view, view.usage, pod, *share)) {
      grants.assign(1, DeviceGrant{card, share->memory_on(view.device(static_cast<size_t>(card)).memory_mib),
                                   std::min<int32_t>(share->cores, 100)});
      NodeScore s = policy.score(view, pod, candidate);
      if (!have || s.rank > node_best.rank) {
        have = true;
        node_best = s;
        node_alloc = candidate;
      }
    }
    if (have) consider(id, node_best, node_alloc);
  }

  if (best.found) {
    decision.node = best.node;
    decision.score = best.score.shown;
    decision.allocation = std::move(best.allocation);
  }
  if (full) {
    // HAMi sorts the fitting nodes so the chosen one is last.
    std::stable_sort(decision.fitting.begin(), decision.fitting.end(),
                     [](const FittingNode& a, const FittingNode& b) {
                       if (a.score.rank != b.score.rank) return a.score.rank < b.score.rank;
                       return a.node > b.node;
                     });
    if (decision.placed()) {
      decision.events.push_back({"Normal", "FilteringSucceed", filtering_succeed_message(cluster, decision)});
    } else {
      decision.events = filtering_failed_events(cluster, decision);
    }
  }
  return decision;
}

void Scheduler::commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy) {
  if (!decision.placed()) return;
  cluster.charge(*decision.node, decision.allocation, pod.host);
  policy.on_charge(cluster.view(*decision.node), pod, decision.allocation);
}

std::string filtering_succeed_message(const Cluster& cluster, const Decision& decision) {
  std::vector<std::string> scores;
  scores.reserve(decision.fitting.size());
  for (const auto& f : decision.fitting)
    scores.push_back(fmt::format("{}:{:.2f}", cluster.node(f.node).name, static_cast<float>(f.score.shown)));
  return fmt::format("find fit node({}), {} nodes not fit, {} nodes fit({})",
                     cluster.node(*decision.node).name, cluster.size() - decision.fitting.size(),
                     decision.fitting.size(), fmt::join(scores, ","));
}

std::vector<Event> filtering_failed_events(const Cluster& cluster, const Decision& decision) {
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& [id, reason] : decision.failed)
    for (auto& name : parse_reason_names(reason)) by_reason[name].push_back(cluster.node(id).name);
  std::vector<Event> events;
  for (auto& [reason, nodes] : by_reason) {
    std::sort(nodes.begin(), nodes.end());
    events.push_back({"Warning", "FilteringFailed",
                      fmt::format("{} nodes {}({})", nodes.size(), reason, fmt::join(nodes, ","))});
  }
  events.push_back(
      {"Warning", "FilteringFailed", fmt::format("no available node, {} nodes do not meet", cluster.size())});
  return events;
}

}  // namespace gpuslice::core
