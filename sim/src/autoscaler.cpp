#include "autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "gpuslice/core/scheduler.hpp"

namespace gpuslice::sim {

namespace {

// A charge of the node's whole capacity: every card's memory and cores (one
// grant a card) and the host's CPU and memory. HAMi's fit then refuses the
// node for any GPU pod (each asks some memory: 100 % when it names none)
// and for any pod asking host resources the node tracks.
core::PodAllocation whole_node(const core::Node& node) {
  core::PodAllocation a;
  a.containers.emplace_back();
  for (size_t c = 0; c < node.devices.size(); ++c) {
    core::DeviceGrant g;
    g.device = static_cast<int>(c);
    g.memory_mib = node.devices[c].memory_mib;
    g.cores = node.devices[c].cores;
    a.containers.back().push_back(g);
  }
  return a;
}

// Money: cents.
double cents(double x) { return std::round(x * 100) / 100; }

}  // namespace

Autoscaler::Autoscaler(const std::vector<NodeGroupSpec>& groups, const AutoscalerSpec& spec,
                       size_t first_node, core::Cluster& cluster, Metrics& metrics, uint64_t seed,
                       const std::string& gpu_policy)
    : spec_(spec), cluster_(cluster), metrics_(metrics), rng_(seed) {
  core::PolicyArgs args;
  args.gpu_policy = gpu_policy;
  fit_policy_ = core::make_policy("hami", args);
  entry_of_.assign(cluster_.size(), -1);
  auto add_entry = [&](uint32_t gi, NodeState state, size_t node, bool member) {
    entry_of_[node] = static_cast<int32_t>(state_.size());
    state_.push_back({gi, state, -1, node, member});
    blocks_.push_back(whole_node(cluster_.node(node)));
    if (state == NodeState::Absent) {
      block(node);
      metrics_.node_present(cluster_, node, false);
    }
  };
  size_t node = first_node;
  for (uint32_t gi = 0; gi < groups.size(); ++gi) {
    Group g;
    g.spec = groups[gi];
    g.first = node;
    if (g.spec.max > 0) {
      const core::Node& t = cluster_.node(node);
      g.cpu_milli = t.capacity.cpu_milli;
      g.memory_mib = t.capacity.memory_mib;
      for (const auto& d : t.devices) g.gpu_memory += d.memory_mib;
    }
    for (size_t m : g.spec.members) add_entry(gi, NodeState::Ready, m, true);
    // min counts the members: new nodes make up the rest from the start.
    const int members = static_cast<int>(g.spec.members.size());
    const int made = std::max(0, g.spec.min - members);
    for (int i = 0; i < g.spec.max; ++i, ++node)
      add_entry(gi, i < made ? NodeState::Ready : NodeState::Absent, node, false);
    g.ready = members + made;
    g.peak = g.ready;
    g.record(0);
    present_ += static_cast<size_t>(g.ready);
    groups_.push_back(std::move(g));
  }
}

void Autoscaler::block(size_t node) {
  const auto& n = cluster_.node(node);
  cluster_.charge(node, blocks_[entry(node)], {n.capacity.cpu_milli, n.capacity.memory_mib});
}

void Autoscaler::unblock(size_t node) {
  const auto& n = cluster_.node(node);
  cluster_.release(node, blocks_[entry(node)], {n.capacity.cpu_milli, n.capacity.memory_mib});
}

double Autoscaler::next_scan(double now) const {
  const double ticks = std::ceil(now / spec_.scan_interval - 1e-9);
  return std::max(now, ticks * spec_.scan_interval);
}

void Autoscaler::account(Group& g, double now) {
  g.node_seconds += static_cast<double>(g.target()) * (now - g.since);
  g.since = now;
}

double Autoscaler::utilization(size_t node) const {
  int64_t used = 0, total = 0;
  const auto use = cluster_.usage(node);
  const auto& devices = cluster_.node(node).devices;
  for (size_t c = 0; c < devices.size(); ++c) {
    used += use[c].memory_mib;
    total += devices[c].memory_mib;
  }
  return total == 0 ? 0.0 : static_cast<double>(used) / static_cast<double>(total);
}

bool Autoscaler::fits_template(Group& g, const PendingPod& p) {
  if (!g.estimate) {
    g.estimate = std::make_unique<core::Cluster>();
    for (int i = 0; i < g.spec.max; ++i)
      g.estimate->add_node(cluster_.node(g.first + static_cast<size_t>(i)));
  }
  if (g.fits_template.size() <= p.shape) g.fits_template.resize(p.shape + 1, -1);
  if (g.fits_template[p.shape] < 0) {
    const std::vector<size_t> first{0};
    g.fits_template[p.shape] =
        fit_scheduler_.place_among(*g.estimate, first, 1, *p.request, *fit_policy_, core::Detail::Minimal)
                .placed()
            ? 1
            : 0;
  }
  return g.fits_template[p.shape] == 1;
}

Autoscaler::Estimate Autoscaler::estimate(Group& g, const std::vector<const PendingPod*>& pods, int limit) {
  core::Cluster& est = *g.estimate;
  // CA's equivalence groups, in its DecreasingPodOrderer's order: the host
  // CPU and memory the pod asks as shares of the template's (GPUs are not
  // in CA's score); equal scores keep the queue's order.
  std::vector<std::vector<const PendingPod*>> classes;
  std::map<uint32_t, size_t> class_of;
  for (const PendingPod* p : pods) {
    auto [it, added] = class_of.try_emplace(p->shape, classes.size());
    if (added) classes.emplace_back();
    classes[it->second].push_back(p);
  }
  auto score = [&](const std::vector<const PendingPod*>& c) {
    const auto& host = c.front()->request->host;
    double s = 0;
    if (g.cpu_milli > 0) s += static_cast<double>(host.cpu_milli) / static_cast<double>(g.cpu_milli);
    if (g.memory_mib > 0) s += static_cast<double>(host.memory_mib) / static_cast<double>(g.memory_mib);
    return s;
  };
  std::stable_sort(classes.begin(), classes.end(),
                   [&](const auto& a, const auto& b) { return score(a) > score(b); });

  struct Charged {
    size_t node;
    core::PodAllocation allocation;
    core::HostResources host;
  };
  std::vector<Charged> charged;
  std::vector<size_t> added;  // estimation nodes 0..k-1
  std::vector<bool> with_pods;
  std::vector<uint32_t> placed;
  auto try_on = [&](const PendingPod& p, const std::vector<size_t>& among) {
    if (among.empty()) return false;
    core::Decision d =
        fit_scheduler_.place_among(est, among, among.size(), *p.request, *fit_policy_, core::Detail::Minimal);
    if (!d.placed()) return false;
    est.charge(*d.node, d.allocation, p.request->host);
    with_pods[*d.node] = true;
    placed.push_back(p.id);
    charged.push_back({*d.node, std::move(d.allocation), p.request->host});
    return true;
  };
  for (const auto& c : classes) {
    size_t i = 0;
    // tryToScheduleOnExistingNodes: the nodes this estimate added, until a pod fits none.
    while (i < c.size() && try_on(*c[i], added)) ++i;
    // tryToScheduleOnNewNodes: the last node added, else a new one.
    for (; i < c.size(); ++i) {
      if (!added.empty() && try_on(*c[i], {added.back()})) continue;
      // An empty last node that did not take the pod: a new one would not either.
      if (!added.empty() && !with_pods[added.back()]) break;
      if (static_cast<int>(added.size()) >= limit) break;
      added.push_back(added.size());
      with_pods.push_back(false);
      if (!try_on(*c[i], {added.back()})) break;
    }
  }
  Estimate out;
  for (auto it = charged.rbegin(); it != charged.rend(); ++it) {
    for (const auto& c : core::effective_charges(it->allocation)) out.gpu_memory_mib += c.usage.memory_mib;
    est.release(it->node, it->allocation, it->host);
  }
  out.nodes = static_cast<int>(std::count(with_pods.begin(), with_pods.end(), true));
  out.pods = std::move(placed);
  return out;
}

std::optional<ScaleUp> Autoscaler::scale_up(double now, const std::vector<PendingPod>& pending) {
  if (pending.empty()) return std::nullopt;
  // CA's filterOutSchedulable: pods that fit a Ready node or one on its way
  // (upcoming nodes count as if Ready) trigger nothing. Tentative charges,
  // undone below.
  std::vector<size_t> starting;
  for (size_t i = 0; i < state_.size(); ++i)
    if (state_[i].state == NodeState::Starting) {
      starting.push_back(state_[i].node);
      unblock(state_[i].node);
    }
  struct Charged {
    size_t node;
    core::PodAllocation allocation;
    core::HostResources host;
  };
  std::vector<Charged> charged;
  std::vector<const PendingPod*> unschedulable;
  for (const auto& p : pending) {
    core::Decision d = fit_scheduler_.place(cluster_, *p.request, *fit_policy_, core::Detail::Minimal);
    if (!d.placed()) {
      unschedulable.push_back(&p);
      continue;
    }
    cluster_.charge(*d.node, d.allocation, p.request->host);
    charged.push_back({*d.node, std::move(d.allocation), p.request->host});
  }
  for (auto it = charged.rbegin(); it != charged.rend(); ++it)
    cluster_.release(it->node, it->allocation, it->host);
  for (size_t n : starting) block(n);
  if (unschedulable.empty()) return std::nullopt;

  // One option per group that can grow: CA's computeExpansionOption.
  std::vector<size_t> options;
  std::vector<Estimate> estimates;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    const int room = g.spec.max - g.target();
    if (room <= 0) continue;
    std::vector<const PendingPod*> fitting;
    for (const PendingPod* p : unschedulable)
      if (fits_template(g, *p)) fitting.push_back(p);
    if (fitting.empty()) continue;
    auto e = estimate(g, fitting, room);
    if (e.nodes == 0) continue;
    options.push_back(gi);
    estimates.push_back(std::move(e));
  }
  if (options.empty()) return std::nullopt;
  const size_t k = pick(options, estimates, unschedulable);
  Group& g = groups_[options[k]];
  account(g, now);
  ScaleUp up;
  up.group = options[k];
  up.from = g.target();
  for (int i = 0; i < g.spec.max && static_cast<int>(up.nodes.size()) < estimates[k].nodes; ++i) {
    NodeEntry& e = state_[entry(g.first + static_cast<size_t>(i))];
    if (e.state != NodeState::Absent) continue;
    e.state = NodeState::Starting;
    up.nodes.push_back(g.first + static_cast<size_t>(i));
  }
  g.starting += static_cast<int>(up.nodes.size());
  present_ += up.nodes.size();
  up.to = g.target();
  g.peak = std::max(g.peak, g.target());
  ++g.scale_ups;
  g.nodes_added += up.nodes.size();
  g.record(now);
  last_scale_up_ = now;
  up.pods = std::move(estimates[k].pods);
  return up;
}

size_t Autoscaler::pick(const std::vector<size_t>& options, const std::vector<Estimate>& est,
                        const std::vector<const PendingPod*>& pods) {
  std::vector<double> score(options.size(), 0);  // lower is better
  if (spec_.expander != Expander::Random) {
    std::map<uint32_t, const core::PodRequest*> request_of;
    for (const PendingPod* p : pods) request_of[p->id] = p->request;
    for (size_t k = 0; k < options.size(); ++k) {
      const Group& g = groups_[options[k]];
      const double count = est[k].nodes;
      switch (spec_.expander) {
        case Expander::LeastWaste: {
          // CA's least-waste: the unused share of the new nodes' CPU plus
          // that of their memory. A template tracking neither (a GPU-only
          // template) is compared by the unused share of its GPU memory.
          int64_t cpu = 0, memory = 0;
          for (uint32_t id : est[k].pods) {
            const core::PodRequest& r = *request_of.at(id);
            cpu += r.host.cpu_milli;
            memory += r.host.memory_mib;
          }
          auto waste = [&](int64_t asked, int64_t per_node) {
            const double avail = static_cast<double>(per_node) * count;
            return (avail - static_cast<double>(asked)) / avail;
          };
          if (g.cpu_milli > 0 || g.memory_mib > 0) {
            if (g.cpu_milli > 0) score[k] += waste(cpu, g.cpu_milli);
            if (g.memory_mib > 0) score[k] += waste(memory, g.memory_mib);
          } else {
            score[k] = waste(est[k].gpu_memory_mib, g.gpu_memory);
          }
          break;
        }
        case Expander::Price:
          score[k] = count * g.spec.price_per_hour;
          break;
        case Expander::MostPods:
          score[k] = -static_cast<double>(est[k].pods.size());
          break;
        case Expander::Random:
          break;
      }
    }
  }
  const double best = *std::min_element(score.begin(), score.end());
  std::vector<size_t> ties;
  for (size_t k = 0; k < options.size(); ++k)
    if (score[k] == best) ties.push_back(k);
  // CA's random fallback among the options the expander could not tell apart.
  if (ties.size() == 1) return ties.front();
  return ties[std::uniform_int_distribution<size_t>(0, ties.size() - 1)(rng_)];
}

void Autoscaler::node_ready(size_t node, double now) {
  NodeEntry& e = state_[entry(node)];
  if (e.state != NodeState::Starting) return;
  Group& g = groups_[e.group];
  account(g, now);
  e.state = NodeState::Ready;
  --g.starting;
  ++g.ready;
  unblock(node);
  metrics_.node_present(cluster_, node, true);
}

double Autoscaler::usage_changed(size_t node, double now) {
  NodeEntry& e = state_[entry(node)];
  if (e.state != NodeState::Ready) return -1;
  const NodeGroupSpec& g = groups_[e.group].spec;
  if (utilization(node) >= g.scale_down_utilization) {
    e.unneeded_since = -1;
    return -1;
  }
  if (e.unneeded_since >= 0) return -1;  // its check is already due
  e.unneeded_since = now;
  return next_scan(now + g.scale_down_unneeded);
}

Autoscaler::Check Autoscaler::check_scale_down(size_t node, double now, const std::vector<PodOnNode>& pods) {
  NodeEntry& e = state_[entry(node)];
  Group& g = groups_[e.group];
  // A check planned before the node became needed again (or left): stale.
  if (e.state != NodeState::Ready || e.unneeded_since < 0 ||
      next_scan(e.unneeded_since + g.spec.scale_down_unneeded) > now + 1e-9)
    return {Verdict::Keep, -1};
  if (utilization(node) >= g.spec.scale_down_utilization) {
    e.unneeded_since = -1;
    return {Verdict::Keep, -1};
  }
  // Never below min: looked at again later (the group may grow meanwhile).
  if (g.target() <= g.spec.min) return {Verdict::Later, next_scan(now + g.spec.scale_down_unneeded)};
  // CA's --scale-down-delay-after-add.
  if (now < last_scale_up_ + spec_.scale_down_delay_after_add)
    return {Verdict::Later, next_scan(last_scale_up_ + spec_.scale_down_delay_after_add)};
  // CA's drainability rules: a pod no controller makes again, or one its
  // PodDisruptionBudget protects, keeps the node until it leaves.
  for (const auto& p : pods)
    if (!p.controlled || p.pdb_protected) {
      e.unneeded_since = -1;
      return {Verdict::Keep, -1};
    }
  // Every pod must fit another Ready node (the core's fit, tentatively).
  std::vector<size_t> others;
  for (size_t n = 0; n < cluster_.size(); ++n)
    if (n != node && (entry_of_[n] < 0 || state_[entry(n)].state == NodeState::Ready)) others.push_back(n);
  struct Charged {
    size_t node;
    core::PodAllocation allocation;
    core::HostResources host;
  };
  std::vector<Charged> charged;
  bool movable = true;
  for (const auto& p : pods) {
    core::Decision d = fit_scheduler_.place_among(cluster_, others, others.size(), *p.request, *fit_policy_,
                                                  core::Detail::Minimal);
    if (!d.placed()) {
      movable = false;
      break;
    }
    cluster_.charge(*d.node, d.allocation, p.request->host);
    charged.push_back({*d.node, std::move(d.allocation), p.request->host});
  }
  for (auto it = charged.rbegin(); it != charged.rend(); ++it)
    cluster_.release(it->node, it->allocation, it->host);
  if (!movable) {
    // No room for its pods now: unneeded again from now (CA checks every
    // loop; the run looks again one unneeded period later).
    e.unneeded_since = now;
    return {Verdict::Later, next_scan(now + g.spec.scale_down_unneeded)};
  }
  return {Verdict::Remove, -1};
}

void Autoscaler::remove(size_t node, double now) {
  NodeEntry& e = state_[entry(node)];
  Group& g = groups_[e.group];
  account(g, now);
  metrics_.node_present(cluster_, node, false);
  block(node);
  e.state = NodeState::Absent;
  e.unneeded_since = -1;
  --g.ready;
  --present_;
  ++g.scale_downs;
  g.record(now);
}

size_t Autoscaler::gpus() const {
  size_t cards = 0;
  for (size_t n = 0; n < cluster_.size(); ++n)
    if (entry_of_[n] < 0 || state_[entry(n)].state != NodeState::Absent)
      cards += cluster_.node(n).devices.size();
  return cards;
}

nlohmann::ordered_json Autoscaler::summary(double end) const {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  double total = 0, node_hours = 0;
  for (const auto& g : groups_) {
    const double hours = (g.node_seconds + static_cast<double>(g.target()) * (end - g.since)) / 3600.0;
    const double cost = cents(hours * g.spec.price_per_hour);
    total += cost;
    node_hours += hours;
    groups.push_back({{"name", g.spec.name},
                      {"min", g.spec.min},
                      {"max", g.spec.max},
                      {"price_per_hour", g.spec.price_per_hour},
                      {"scale_ups", g.scale_ups},
                      {"scale_downs", g.scale_downs},
                      {"nodes_added", g.nodes_added},
                      {"peak_nodes", g.peak},
                      {"nodes_at_end", g.target()},
                      {"pods_evicted", g.pods_evicted},
                      {"node_hours", hours},
                      {"cost", cost},
                      {"sizes", {{"time", g.size_time}, {"nodes", g.size_nodes}}},
                      {"members", g.spec.members.size()}});
  }
  return {{"expander", expander_name(spec_.expander)},
          {"node_groups", std::move(groups)},
          {"node_hours", node_hours},
          {"cost", cents(total)}};
}

}  // namespace gpuslice::sim
