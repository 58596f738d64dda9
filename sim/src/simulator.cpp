#include "gpuslice/sim/simulator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>

#include "autoscaler.hpp"
#include "card_use_log.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/place.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/preemption.hpp"
#include "gpuslice/core/request_shape.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/core/translate.hpp"
#include "gpuslice/sim/engine.hpp"
#include "gpuslice/sim/memory_estimate.hpp"
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/refusal_explainer.hpp"

namespace gpuslice::sim {

namespace {

// An openb trace's pods carry the study's own milli-GPU figures: its
// allocation ratio adds those up (see PodSpec::milli_from_trace).
bool from_trace(const Workload& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](const PodSpec& p) { return p.milli_from_trace; });
}

// The workload in the terms the run's policy reads (translate.hpp): a
// copy only when some pod needs rewriting. A pod the policy's dialect
// cannot carry keeps its request and is refused on arrival, naming the field.
struct TranslatedWorkload {
  Workload copy;
  bool copied = false;
  std::vector<std::string> problems;  // by pod; empty when none
};
TranslatedWorkload translate_workload(const Workload& w, core::Dialect dialect) {
  TranslatedWorkload t;
  for (size_t i = 0; i < w.size(); ++i) {
    core::PodRequest r = w[i].request;
    auto problem = core::translate(r, dialect);
    if (!problem && core::same_shape(r, w[i].request)) continue;
    if (!t.copied) {
      t.copy = w;
      t.copied = true;
    }
    if (problem) {
      t.problems.resize(w.size());
      t.problems[i] = problem->text();
    } else {
      t.copy[i].request = std::move(r);
    }
  }
  return t;
}

class Run {
  // A running pod as preemption's walk reads it on its node (running_on_node_).
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static constexpr size_t kEventsPerPodReserved = 3;
  static constexpr size_t kEventsReservedAtMost = size_t{1} << 20;
  struct OnNode {
    uint32_t id = 0;
    int32_t priority = 0;
    bool guarded = false;     // guarded(id)
    uint32_t slot = kNoSlot;  // its place in question_.running once preemption offered it
  };

 public:
  Run(const core::Cluster& fleet, const Workload& w, const RunOptions& o)
      : translated_(translate_workload(w, core::make_policy(o.policy)->dialect())),
        cluster_(fleet),
        workload_(translated_.copied ? translated_.copy : w),
        options_(o),
        typical_pods_(trace_typical_pods(w)),
        fragmentation_(std::make_shared<core::FragmentationModel>(typical_pods_)),
        metrics_(cluster_, from_trace(w), fragmentation_) {
    core::PolicyArgs args;
    args.seed = o.seed;
    args.gpu_policy = o.gpu_policy;
    args.typical_pods = typical_pods_;
    args.fragmentation = fragmentation_;
    policy_ = core::make_policy(o.policy, args);
    // A policy placing another dialect's requests (DRA's `dra`, HAMi's):
    // its own unit's binding is recorded beside that dialect's form.
    binding_unit_ = core::dialects::binding_recorded_by(o.policy);
    // HAMi's quota is HAMi's fit's (its policies and the study's, which fit as HAMi does).
    if (policy_->dialect() == core::Dialect::Hami && !policy_->device_fit()) {
      for (const auto& q : o.quotas) {
        quotas_.add(q);
        quota_limits_.add(q);
      }
      if (quotas_.has_limits()) {
        quota_ = &quotas_;
        scheduler_.set_quotas(quota_);
      }
    }
    observers_.push_back(&metrics_);
    if (o.card_use) {
      card_use_log_ = std::make_unique<CardUseLog>(result_.card_use);
      observers_.push_back(card_use_log_.get());
    }
    metrics_.observe_curve();  // the study's first record: nothing arrived yet
    records_.resize(w.size());
    shape_of_.assign(w.size(), UINT32_MAX);
    queued_at_.resize(w.size());
    expected_end_.assign(w.size(), kForever);
    running_on_node_.resize(cluster_.size());
    running_.reset(workload_.size());
    for (size_t i = 0; i < w.size(); ++i) {
      const auto& p = w[i];
      if (p.duration != kForever) departures_ = true;
      if (p.running_on) starting_ = true;
      if (!(p.priority == w.front().priority)) priorities_differ_ = true;
      queued_at_[i] = p.arrival;
    }
    preemption_rng_.seed(o.seed);
    for (const auto& b : o.disruption_budgets) budget_counts_.push_back(b.outside);
    if (std::any_of(w.begin(), w.end(), [](const PodSpec& p) { return p.pdb_protected; }))
      protected_budget_ = static_cast<uint32_t>(o.disruption_budgets.size());
    if (!o.node_groups.empty()) start_autoscaler();
    queues_ = departures_ || autoscaler_;
    full_events_ = cluster_.size() <= 64;
    // A grid reading only the summary and curves needs a coarse timeline.
    sample_every_ = std::max<size_t>(1, w.size() / (o.records ? 10000 : 200));
  }

  RunResult go(const std::string& name) {
    const auto start = std::chrono::steady_clock::now();
    // Room for a few events a pod up front: the list grows to tens of
    // thousands on a trace, and each doubling copied it into new pages
    // (the memory set aside is not touched until used). Capped, so a
    // trace of millions of pods does not set gigabytes aside.
    if (options_.records)
      result_.events.reserve(std::min(kEventsPerPodReserved * workload_.size(), kEventsReservedAtMost));
    for (uint32_t i = 0; i < workload_.size(); ++i) {
      const auto& p = workload_[i];
      PodRecord& r = records_[i];
      r = PodRecord{};
      if (options_.records) r.name = p.name.empty() ? p.request.name : p.name;
      r.kind = p.kind;
      r.status = "pending";
      r.arrival = p.arrival;
      r.gpu_milli = p.gpu_milli;
      r.priority = p.priority.value;
      if (options_.records) r.priority_class = p.priority.class_name;
      records_[i].origin = p.origin;
      if (p.running_on)
        start_running(i);
      else
        engine_.schedule(p.arrival, EventKind::Arrival, i);
    }
    size_t handled = 0;
    while (!engine_.empty()) {
      const Event e = engine_.next();
      metrics_.advance(e.time);
      switch (e.kind) {
        case EventKind::Arrival:
          arrive(e.pod);
          break;
        case EventKind::Departure:
          depart(e.pod);
          break;
        case EventKind::ScaleUpScan:
          --loop_events_;
          scale_up_scan();
          break;
        case EventKind::NodeReady:
          node_ready(e.pod);
          break;
        case EventKind::ScaleDownCheck:
          --loop_events_;
          scale_down_check(e.pod);
          break;
      }
      if (autoscaler_ && autoscaled_run_over()) break;
      if (++handled % sample_every_ == 0) sample();
      if (options_.progress && handled % 64 == 0 && progress_due() &&
          !options_.progress(static_cast<double>(handled) / static_cast<double>(2 * workload_.size()))) {
        result_.interrupted = true;
        break;
      }
    }
    sample();
    // Pods still waiting count in the pending figures with the wait so far
    // (a lower bound); one FIFO never got to try says why it waited.
    for (uint32_t id : pending_) {
      records_[id].status = "pending";
      if (records_[id].reason.empty()) records_[id].reason = "WaitingInQueue";
      if (options_.records && !workload_[id].origin.empty() && !policy_->device_fit())
        records_[id].shortfall = shortfall(workload_[id].request);
      if (!result_.interrupted) waited(id, engine_.now() - queued_at_[id]);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    summarize(name, wall);
    result_.pods = std::move(records_);
    result_.claim_allocations = binding_unit_ != nullptr;
    if (options_.card_use)
      for (size_t n = 0; n < cluster_.size(); ++n) result_.node_names.push_back(cluster_.node(n).name);
    return std::move(result_);
  }

 private:
  // Progress is reported by time, not by event count: one event can cost a
  // microsecond (binpack) or a millisecond (random with a long pending
  // queue), and Ctrl-C must answer within a fraction of a second either way.
  bool progress_due() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress_ < std::chrono::milliseconds(20)) return false;
    last_progress_ = now;
    return true;
  }

  // A snapshot's pod placed before the run: it holds its grants from time 0.
  void start_running(uint32_t id) {
    const auto& p = workload_[id];
    core::Decision d;
    d.node = p.running_on->node;
    d.allocation = p.running_on->allocation;
    core::Scheduler::commit(cluster_, p.request, d, *policy_, quota_);
    moved(&RunObserver::placed, id, *d.node, d.allocation);
    auto& r = records_[id];
    r.starting = true;
    r.start = 0;
    r.status = "running";
    if (options_.records) {
      r.node = cluster_.node(*d.node).name;
      r.allocation = core::codec::encode_allocation(d.allocation, cluster_.node(*d.node));
      r.mig_allocations = core::codec::encode_mig_allocations(d.allocation, cluster_.node(*d.node));
      if (binding_unit_) r.claim_allocation = unit_binding(p.request, *d.node, d.allocation);
    }
    if (p.duration != kForever) leave_at(id, p.duration);
    count_in_budgets(id, +1, +1);
    running_on_node_[*d.node].push_back({id, p.priority.value, guarded(id)});
    ++running_by_priority_[p.priority.value];
    running_.emplace(id, Placement{*d.node, std::move(d.allocation)});
  }

  // The binding binding_unit_ writes for a pod placed (its main value).
  std::string unit_binding(const core::PodRequest& pod, size_t node,
                           const core::PodAllocation& allocation) const {
    static const std::map<int, std::string> kNoGroups;
    return binding_unit_->write_binding({cluster_.node(node), pod, allocation, kNoGroups}).allocation;
  }

  // The first attempt of a small fleet's pod keeps HAMi's full report (its
  // events); retries of waiting pods only need the choice.
  bool try_place(uint32_t id, bool first_attempt = false) {
    const auto& p = workload_[id];
    const core::Detail detail = full_events_ && first_attempt ? core::Detail::Full : core::Detail::Minimal;
    core::Decision d = detail == core::Detail::Minimal && fits_no_node_as_kept(id)
                           ? core::Decision{}
                           : scheduler_.place(cluster_, p.request, *policy_, detail);
    if (!d.placed()) {
      // A snapshot run's pods say in numbers how close the best card came.
      if (options_.records && !p.origin.empty() && records_[id].shortfall.empty() && !policy_->device_fit())
        records_[id].shortfall = shortfall(p.request);
      if (!options_.records || !records_[id].reason.empty() || explained_ >= options_.explain_limit)
        return false;
      if (detail == core::Detail::Full)
        explain(id, d);
      else if (full_events_ || scheduler_.quota_armed())
        // The kept per-node reasons know no quota: a pod its namespace's
        // quota may refuse is explained by HAMi's full report.
        explain(id, scheduler_.place(cluster_, p.request, *policy_, core::Detail::Full));
      else
        explain_by_counts(id);
      return false;
    }
    start(id, std::move(d));
    return true;
  }

  // True when the per-node refusals kept for the pod's shape (refitted on
  // the nodes changed since they were last asked) show no node that fits:
  // the scheduler accepts no node HAMi's fit refuses, so its scan of the
  // fleet would place the pod nowhere. Only a shape refused before is
  // asked (on a full fleet most refusals repeat a shape, and a victim made
  // again is most often refused), and never under a policy drawing lots:
  // skipping its decision would skip a draw and change every later one.
  bool fits_no_node_as_kept(uint32_t id) {
    if (policy_->lottery()) return false;
    const size_t shape = shape_of(id);
    if (!explainer_.knows(cluster_, shape)) return false;
    const auto& p = workload_[id];
    if (explainer_.fitting(cluster_, shape, p.request, policy_->gpu_policy_for(p.request),
                           policy_->device_fit()) > 0)
      return false;
#ifndef NDEBUG
    // Debug builds (the sanitizer job) check the claim on every use.
    if (scheduler_.place(cluster_, p.request, *policy_, core::Detail::Minimal).placed())
      throw std::logic_error(fmt::format(
          "pod '{}' fits no node by its kept refusals, yet the scheduler places it", p.request.name));
#endif
    return true;
  }

  // kube-scheduler's next attempt for a pod that preempted on `node` (its
  // nominatedNodeName): the nominated node alone first (evaluateNominatedNode),
  // the whole fleet only if the pod does not fit there. The node is the only
  // one preemption changed since the pod fitted nowhere, so this is also
  // where a fleet-wide search would put it, without ranking every node.
  bool place_nominated(uint32_t id, size_t node) {
    const std::vector<size_t> nominated{node};
    core::Decision d = scheduler_.place_among(cluster_, nominated, 1, workload_[id].request, *policy_,
                                              core::Detail::Minimal);
    if (!d.placed()) return try_place(id);
    start(id, std::move(d));
    return true;
  }

  // The pod runs where `d` places it from now.
  void start(uint32_t id, core::Decision&& d) {
    const auto& p = workload_[id];
    core::Scheduler::commit(cluster_, p.request, d, *policy_, quota_);
    moved(&RunObserver::placed, id, *d.node, d.allocation);
    auto& r = records_[id];
    if (options_.records) {
      r.node = cluster_.node(*d.node).name;
      r.allocation = core::codec::encode_allocation(d.allocation, cluster_.node(*d.node));
      r.mig_allocations = core::codec::encode_mig_allocations(d.allocation, cluster_.node(*d.node));
      if (binding_unit_) r.claim_allocation = unit_binding(p.request, *d.node, d.allocation);
    }
    r.start = engine_.now();
    r.status = "running";
    waited(id, engine_.now() - queued_at_[id]);
    // Pods placed: a pod preempted or drained and placed again is not a second.
    if (r.preempted == 0 && (drained_.empty() || !drained_[id])) ++placed_;
    if (!d.events.empty()) event(id, d.events.front());
    if (p.duration != kForever) leave_at(id, engine_.now() + p.duration);
    count_in_budgets(id, 0, +1);
    running_on_node_[*d.node].push_back({id, p.priority.value, guarded(id)});
    ++running_by_priority_[p.priority.value];
    running_.emplace(id, Placement{*d.node, std::move(d.allocation)});
  }

  // A placed pod's departure. A pod preempted and placed again has a new
  // one; the event of the old is recognised as stale by its time.
  void leave_at(uint32_t id, double time) {
    expected_end_[id] = time;
    engine_.schedule(time, EventKind::Departure, id);
  }

  // A placed pod's wait, overall and by its priority class.
  void waited(uint32_t id, double seconds) {
    metrics_.pending_time(seconds);
    if (priorities_differ_) waits_by_class_[class_label(workload_[id].priority)].push_back(seconds);
  }
  static std::string class_label(const PodPriority& p) {
    if (!p.class_name.empty()) return p.class_name;
    return fmt::format("priority {}", p.value);
  }

  // kube-scheduler's PostFilter for a pod that fits nowhere: DefaultPreemption
  // (core/preemption.hpp) over the nodes, from a random offset, stopping
  // once it has as many candidates as kube-scheduler wants (at least 100 or
  // 10 % of the nodes, one of them breaking no budget); the victims of the
  // node it picks are evicted and the pod is scheduled again. Returns
  // whether it is placed then (under `kube`, the slots it freed may be on
  // cards that do not hold it).
  bool preempt(uint32_t id) {
    if (options_.preemption == Preemption::Off || cluster_.size() == 0) return false;
    const PodSpec& pod = workload_[id];
    if (pod.priority.preempt_never || !lower_priority_running(pod.priority.value)) return false;
    // kube-scheduler's preemption knows no HAMi quota: evicting pods frees
    // cards, not the namespace's quota, so a pod its quota refuses does not
    // preempt (it would evict and still be refused).
    if (over_quota_now(pod.request)) return false;
    if (!selector_) {
      rule_ = options_.preemption == Preemption::Kube ? core::FitRule::SlotCount : core::FitRule::Devices;
      selector_ = std::make_unique<core::VictimSelector>(cluster_, *policy_, rule_);
    }
    core::PreemptionQuestion& q = question_;
    q.pod = pod.request;
    q.priority = pod.priority.value;
    // A running pod's entry in q.running is made when preemption first
    // looks at it and kept until it leaves its node (what it holds, its
    // priority, start and budgets do not change while it runs); slots of
    // pods gone are reused, so q.running grows with the pods running.
    disruptions_allowed(q.budgets);
    // The candidates in the walk's order as pickOneNodeForPreemption
    // compares them: the best so far is kept, and only its victims listed.
    const size_t n = cluster_.size();
    const size_t wanted = std::min(n, std::max<size_t>(100, n / 10));
    bool any_non_violating = false;
    size_t candidates = 0, best_node = 0;
    const CachedVerdict* best = nullptr;
    const size_t offset = std::uniform_int_distribution<size_t>(0, n - 1)(preemption_rng_);
    // A node's verdict for this shape at this priority holds while the node
    // is unchanged (its version): on a full fleet most refused pods share a
    // few shapes and a preemption changes a few nodes, so most verdicts are
    // reused. Victims are not kept: the chosen node's are worked out again.
    Verdicts& verdicts =
        verdicts_[(static_cast<uint64_t>(shape_of(id)) << 32) | static_cast<uint32_t>(q.priority)];
    if (verdicts.nodes.empty()) verdicts.nodes.resize(n);
    // The nodes from `offset` round to it again (wrapping by a compare: a
    // division per node is a good part of this walk's time).
    for (size_t k = 0, node = offset; k < n; ++k, node = node + 1 == n ? 0 : node + 1) {
      CachedVerdict& cached = verdicts.nodes[node];
      // A node whose candidates a budget guards is asked each time: the
      // budgets' allowance moves with pods anywhere.
      if (cached.version != cluster_.version(node) || cached.guarded) {
        cached.version = cluster_.version(node);
        cached.guarded = false;
        on_node_.clear();
        for (OnNode& running : running_on_node_[node]) {
          if (running.priority >= q.priority) continue;
          cached.guarded = cached.guarded || running.guarded;
          on_node_.push_back(offer(running, node));
        }
        cached.candidate = false;
        if (!on_node_.empty()) {
          const core::NodeVerdict v = selector_->select(q, node, on_node_);
          cached.candidate = v.outcome == core::NodeOutcome::Victims;
          // The score reads the victims' priorities and starts, which
          // hold while they run here, as the verdict does.
          if (cached.candidate) cached.score = core::score_victims(v.victims, q.running);
        }
      }
      if (!cached.candidate) continue;
      if (!best || core::preferred_victims(cached.score, best->score)) {
        best = &cached;
        best_node = node;
      }
      any_non_violating = any_non_violating || cached.score.pdb_violations == 0;
      if (++candidates >= wanted && any_non_violating) break;
    }
    if (!best) return false;
    // The chosen node's victims, worked out again: its verdict holds (the
    // node is unchanged since, and one whose pods a budget counts was asked
    // in this walk), so select answers as it did. Keeping every
    // candidate's victims cost more than this one call.
    on_node_.clear();
    for (OnNode& running : running_on_node_[best_node])
      if (running.priority < q.priority) on_node_.push_back(offer(running, best_node));
    const core::NodeVerdict chosen = selector_->select(q, best_node, on_node_);
    if (chosen.outcome != core::NodeOutcome::Victims ||
        core::score_victims(chosen.victims, q.running) != best->score)
      throw std::logic_error(fmt::format("preemption: node '{}' gave other victims than its kept verdict",
                                         cluster_.node(best_node).name));
    evicting_.clear();
    for (uint32_t slot : chosen.victims.victims) evicting_.push_back(slot_pod_[slot]);
    for (uint32_t victim : evicting_) evict(victim, id, best_node);
    return place_nominated(id, best_node);
  }

  // The running pod's place in question_.running, made on first use.
  uint32_t offer(OnNode& pod, size_t node) {
    const uint32_t id = pod.id;
    uint32_t& slot = pod.slot;
    if (slot != kNoSlot) return slot;
    if (free_slots_.empty()) {
      slot = static_cast<uint32_t>(question_.running.size());
      question_.running.push_back(running_pod(id, node));
      slot_pod_.push_back(id);
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      question_.running[slot] = running_pod(id, node);
      slot_pod_[slot] = id;
    }
    return slot;
  }

  // A running pod as preemption sees it.
  core::RunningPod running_pod(uint32_t id, size_t node) const {
    core::RunningPod rp;
    rp.node = node;
    rp.priority = workload_[id].priority.value;
    rp.start_time = records_[id].start;
    rp.budgets = workload_[id].guarded_by_budgets;
    if (protected_budget_ != UINT32_MAX && workload_[id].pdb_protected)
      rp.budgets.push_back(protected_budget_);
    rp.host = workload_[id].request.host;
    // Offered on many nodes' verdicts while it runs: its charges once, and
    // the allocation itself not copied (preemption reads the charges).
    rp.charges = core::effective_charges(running_.at(id).allocation, cluster_.node(node).devices);
    return rp;
  }

  // The disruption controller's counts of each budget as pods arrive,
  // start, stop and end (docs/simulator.md#disruption-budgets): matched and
  // managed follow the pods that exist (pending or running), healthy the
  // running ones.
  void count_in_budgets(uint32_t id, int present, int running) {
    const PodSpec& p = workload_[id];
    for (uint32_t b : p.counted_by_budgets) {
      core::disruption::BudgetCounts& c = budget_counts_[b];
      c.matched += present;
      if (p.controlled) c.managed += present;
      c.healthy += running;
    }
  }

  // status.disruptionsAllowed of each budget now, as preemption reads it;
  // a scenario's pdb_protected pods share one budget that allows nothing.
  void disruptions_allowed(std::vector<int32_t>& out) const {
    out.clear();
    for (size_t b = 0; b < budget_counts_.size(); ++b)
      out.push_back(
          core::disruption::budget_state(options_.disruption_budgets[b].facts, budget_counts_[b]).allowed);
    if (protected_budget_ != UINT32_MAX) out.push_back(0);
  }

  bool guarded(uint32_t id) const {
    const PodSpec& p = workload_[id];
    return !p.guarded_by_budgets.empty() || (protected_budget_ != UINT32_MAX && p.pdb_protected);
  }

  bool lower_priority_running(int32_t priority) const {
    return !running_by_priority_.empty() && running_by_priority_.begin()->first < priority;
  }

  // The victim leaves its node now (kube-scheduler deletes it; the
  // simulation gives no grace period). A controller's pod queues again as
  // the new pod its controller makes; a bare pod ends.
  void evict(uint32_t victim, uint32_t by, size_t node) {
    const PodSpec& v = workload_[victim];
    take_off(victim, node);
    ++preemptions_;
    gpu_seconds_lost_ += (engine_.now() - records_[victim].start) * static_cast<double>(v.gpu_milli) / 1000.0;
    // kube-scheduler's event on the victim; the preemptor is its related object.
    EventRecord e{engine_.now(),
                  v.request.name,
                  "Normal",
                  "Preempted",
                  fmt::format("Preempted by a pod on node {}", cluster_.node(node).name),
                  workload_[by].request.ns + "/" + workload_[by].request.name,
                  {}};
    result_.events.push_back(std::move(e));
    auto& r = records_[victim];
    ++r.preempted;
    expected_end_[victim] = kForever;
    if (v.controlled) {
      r.status = "pending";
      r.node.clear();
      r.allocation.clear();
      r.start = -1;
      r.starting = false;
      queued_at_[victim] = engine_.now();
      requeued_.push_back(victim);
    } else {
      r.status = "preempted";
      r.end = engine_.now();
      count_in_budgets(victim, -1, 0);  // nothing makes it again
    }
  }

  // A running pod leaves its node: at its end, or before it (preempted or drained).
  void take_off(uint32_t id, size_t node) {
    const Placement& placed = running_.at(id);
    const PodSpec& v = workload_[id];
    cluster_.release(node, placed.allocation, v.request.host);
    if (quota_) quotas_.release(v.request.ns, core::quota_use(placed.allocation));
    core::unreserved(*policy_, cluster_.view(node), v.request, placed.allocation);
    moved(&RunObserver::departed, id, node, placed.allocation);
    forget_running(id, node);
    running_.erase(id);
    count_in_budgets(id, 0, -1);
  }

  void forget_running(uint32_t id, size_t node) {
    auto& on = running_on_node_[node];
    const auto gone = std::find_if(on.begin(), on.end(), [&](const OnNode& pod) { return pod.id == id; });
    if (gone->slot != kNoSlot) {
      question_.running[gone->slot] = {};  // frees what it held
      free_slots_.push_back(gone->slot);
    }
    on.erase(gone);
    auto it = running_by_priority_.find(workload_[id].priority.value);
    if (--it->second == 0) running_by_priority_.erase(it);
  }

  // The pods preempted since the last call, made again by their
  // controllers: each arrives anew (waits, preempts, or is refused as any
  // arriving pod). Their own victims join the list as they go.
  void requeue_preempted() {
    for (size_t i = 0; i < requeued_.size(); ++i) {
      const uint32_t id = requeued_[i];
      if (!queues_) {
        if (!try_place(id) && !preempt(id)) refuse(id);
        continue;
      }
      if (must_queue(id) || !(try_place(id) || preempt(id))) enqueue(id);
    }
    requeued_.clear();
  }

  // kube-scheduler's queue (PrioritySort): higher priority first, then the
  // earlier arrival. Under FIFO a pod waits while a pod at least as
  // important waits before it.
  bool must_queue(uint32_t id) const {
    return options_.queue == QueueDiscipline::Fifo && !pending_.empty() &&
           workload_[pending_.front()].priority.value >= workload_[id].priority.value;
  }
  void enqueue(uint32_t id) {
    if (autoscaler_) request_scan();
    if (!priorities_differ_) {
      pending_.push_back(id);
      return;
    }
    const int32_t p = workload_[id].priority.value;
    auto at = std::find_if(pending_.begin(), pending_.end(),
                           [&](uint32_t other) { return workload_[other].priority.value < p; });
    pending_.insert(at, id);
  }

  // How close the pod came, in numbers: its namespace's quota first when that binds.
  std::string shortfall(const core::PodRequest& pod) const {
    std::string text = core::shortfall(cluster_, pod);
    if (!quota_) return text;
    const std::string over = core::quota_shortfall(cluster_, quotas_, pod);
    return over.empty() ? text : text.empty() ? over : over + "; " + text;
  }

  // A pod its namespace's quota refuses at today's usage, wherever it goes.
  bool over_quota_now(const core::PodRequest& pod) const {
    if (!quota_) return false;
    const auto room = quotas_.headroom(pod.ns);
    return room && !room->admits(core::least_quota_use(cluster_, pod));
  }

  // A pod its namespace's limits refuse even with nothing of it running.
  bool over_quota_limit(uint32_t id) const {
    if (!quota_) return false;
    const auto& pod = workload_[id].request;
    const auto limit = quota_limits_.headroom(pod.ns);
    return limit && !limit->admits(core::least_quota_use(cluster_, pod));
  }

  // Why a pod does not fit: the reason most nodes give, as HAMi's events say it.
  void explain(uint32_t id, const core::Decision& d) {
    ++explained_;
    NodesPerReason nodes{};
    for (const auto& [node, refusal] : d.failed)
      refusal.for_each_reason([&](core::Reason r) { ++nodes[static_cast<size_t>(r)]; });
    records_[id].reason = top_reason(by_name(nodes));
    for (const auto& e : d.events) event(id, e);
  }

  // The same on a large fleet, from per-node reasons kept between refusals.
  // HAMi's event lists every node by name; here the lists are left out
  // (on an openb replay they would be most of the output), counts are kept.
  void explain_by_counts(uint32_t id) {
    ++explained_;
    const auto& p = workload_[id];
    const auto by_reason = by_name(explainer_.reasons(
        cluster_, shape_of(id), p.request, policy_->gpu_policy_for(p.request), policy_->device_fit()));
    records_[id].reason = top_reason(by_reason);
    for (const auto& [reason, nodes] : by_reason)
      event(id, {"Warning", "FilteringFailed", fmt::format("{} nodes {}", nodes, reason)});
    event(id, {"Warning", "FilteringFailed",
               fmt::format("no available node, {} nodes do not meet", cluster_.size())});
  }

  // Reasons by the names HAMi's events use: the one place they become text.
  static std::map<std::string, size_t> by_name(const NodesPerReason& nodes) {
    std::map<std::string, size_t> named;
    for (size_t r = 0; r < nodes.size(); ++r)
      if (nodes[r] > 0) named[std::string(core::reason_name(static_cast<core::Reason>(r)))] = nodes[r];
    return named;
  }

  static std::string top_reason(const std::map<std::string, size_t>& by_reason) {
    std::string top;
    size_t most = 0;
    for (const auto& [name, n] : by_reason)
      if (n > most) {
        most = n;
        top = name;
      }
    return top.empty() ? "NoNodes" : top;
  }

  // Debug builds (the sanitizer CI job) check after every change that no
  // card holds more than its slots, memory or cores, and no host more than
  // its CPU and memory: fit and accounting must never disagree.
  void check_within_capacity(size_t id) const {
    if (core::DeviceFit* fit = policy_->device_fit()) {  // the dialect's own terms
      if (std::string over = fit->over_capacity(cluster_.view(id)); !over.empty())
        throw std::logic_error(fmt::format("invariant: node '{}' {}", cluster_.node(id).name, over));
      return;
    }
    const auto& node = cluster_.node(id);
    const auto use = cluster_.usage(id);
    for (size_t i = 0; i < use.size(); ++i) {
      const auto& d = node.devices[i];
      if (use[i].slots > d.slots || use[i].memory_mib > d.memory_mib || use[i].cores > d.cores)
        throw std::logic_error(fmt::format(
            "invariant: node '{}' card {} holds {} slots, {} MiB, {} cores of {}/{}/{}", node.name, i,
            use[i].slots, use[i].memory_mib, use[i].cores, d.slots, d.memory_mib, d.cores));
    }
    const auto& host = cluster_.host_used(id);
    if ((node.capacity.cpu_milli > 0 && host.cpu_milli > node.capacity.cpu_milli) ||
        (node.capacity.memory_mib > 0 && host.memory_mib > node.capacity.memory_mib))
      throw std::logic_error(fmt::format("invariant: node '{}' host over capacity", node.name));
  }

  // After a node's use changed: its fragment and the cards' use log.
  // A placement or a departure has changed `node`: told to every observer.
  void moved(void (RunObserver::*tell)(const PodMove&), uint32_t id, size_t node,
             const core::PodAllocation& allocation) {
#ifndef NDEBUG
    check_within_capacity(node);
#endif
    const PodMove move{engine_.now(), cluster_, node, workload_[id], allocation};
    for (RunObserver* o : observers_) (o->*tell)(move);
    if (autoscaler_ && autoscaler_->manages(node)) watch_utilization(node);
  }

  void event(uint32_t id, const core::KubeEvent& e) {
    result_.events.push_back(
        {engine_.now(), workload_[id].request.name, e.type, e.reason, e.message, {}, {}});
  }

  void arrive(uint32_t id) {
    for (RunObserver* o : observers_) o->arrived(engine_.now(), workload_[id]);
    count_in_budgets(id, +1, 0);
    if (!translated_.problems.empty() && !translated_.problems[id].empty()) {
      records_[id].reason = "Untranslatable";
      event(id, {"Warning", "Untranslatable",
                 fmt::format("{} cannot carry the request: {}", options_.policy, translated_.problems[id])});
      refuse(id);
      metrics_.observe_curve();
      return;
    }
    // FIFO keeps arrival order: nobody passes a pod that is already waiting
    // (unless it is more important: kube-scheduler's queue is by priority).
    const bool waits_behind = must_queue(id);
    if (waits_behind || !(try_place(id, true) || preempt(id))) {
      if (!queues_) {
        refuse(id);  // nothing ever leaves (the study's model): the pod is refused
      } else if (over_quota_limit(id)) {
        // Its namespace's limits are below the pod itself: no departure
        // makes room, so it would block a FIFO queue forever.
        if (waits_behind) try_place(id, true);
        const std::string why = core::quota_shortfall(cluster_, quota_limits_, workload_[id].request);
        event(id, {"Warning", "NeverFits", why});
        if (records_[id].reason.empty()) records_[id].reason = "ResourceQuotaNotFit";
        if (options_.records && !workload_[id].origin.empty()) records_[id].shortfall = why;
        refuse(id);
      } else if (never_fits(id)) {
        // It fits no node even with the fleet empty: queueing it would block
        // a FIFO queue forever. Refused, with HAMi's reason for it.
        if (waits_behind) try_place(id, true);  // cannot place; records why
        const std::string why =
            policy_->device_fit()
                ? fmt::format("fits no node of the empty fleet in {}'s terms", options_.policy)
                : core::shortfall(*empty_fleet_, workload_[id].request);
        event(id, {"Warning", "NeverFits", why});
        if (options_.records && !workload_[id].origin.empty())
          records_[id].shortfall = "on the empty fleet it " + why;
        refuse(id);
      } else {
        enqueue(id);
      }
    }
    requeue_preempted();
    metrics_.observe_curve();
  }

  // True when the pod fits no node of the fleet with nothing running: HAMi's
  // fit on an empty copy, asked once per request shape, with its own
  // scheduler and a HAMi policy so no cache of the real run is disturbed.
  bool never_fits(uint32_t id) {
    const size_t shape = shape_of(id);
    if (never_fits_.size() <= shape) never_fits_.resize(shape + 1, -1);
    if (never_fits_[shape] < 0) {
      if (!empty_fleet_) {
        empty_fleet_ = std::make_unique<core::Cluster>(cluster_);
        empty_fleet_->clear_usage();
        core::PolicyArgs args;
        args.gpu_policy = options_.gpu_policy;
        // HAMi's fit for HAMi and the study's policies; a dialect's own otherwise.
        fit_policy_ =
            core::make_policy(policy_->dialect() == core::Dialect::Hami ? "hami" : options_.policy, args);
      }
      const auto& pod = workload_[id].request;
      never_fits_[shape] =
          fit_scheduler_.place(*empty_fleet_, pod, *fit_policy_, core::Detail::Minimal).placed() ? 0 : 1;
    }
    return never_fits_[shape] == 1;
  }

  void refuse(uint32_t id) {
    // A preempted pod made again that finds no room (nothing leaves in the
    // study's fill): it was placed once and ends evicted, not refused.
    if (records_[id].preempted > 0) {
      records_[id].status = "preempted";
      records_[id].end = engine_.now();
      return;
    }
    records_[id].status = "refused";
    if (records_[id].reason.empty()) records_[id].reason = "Unexplained";
    metrics_.refused(records_[id].reason);
    ++failed_;
  }

  void depart(uint32_t id) {
    // A departure planned before the pod was preempted: it no longer runs
    // that placement (it may be waiting, or placed again with a new end).
    if (engine_.now() != expected_end_[id]) return;
    const Placement* placed = running_.find(id);
    // Taken off and placed again in one instant (a node drained right after
    // the pod landed on it): the old departure falls on the new one's time.
    if (!placed) return;
    take_off(id, placed->node);
    count_in_budgets(id, -1, 0);  // it ends: nothing makes it again
    records_[id].end = engine_.now();
    records_[id].status = "completed";
    retry_pending();
    requeue_preempted();
  }

  // Waiting pods try again, most important first; one that still fits
  // nowhere may preempt (its victims queue again after this pass).
  void retry_pending() {
    if (options_.queue == QueueDiscipline::Fifo) {
      while (!pending_.empty() && (try_place(pending_.front()) || preempt(pending_.front())))
        pending_.pop_front();
      return;
    }
    for (auto it = pending_.begin(); it != pending_.end();)
      it = try_place(*it) || preempt(*it) ? pending_.erase(it) : it + 1;
  }

  void sample() {
    TimelineRow row = metrics_.row(engine_.now(), running_.size(), pending_.size(), placed_, failed_);
    row.nodes = autoscaler_ ? autoscaler_->nodes() : cluster_.size();
    result_.timeline.push_back(row);
  }

  void summarize(const std::string& name, double wall) {
    auto& s = result_.summary;
    size_t never_placed = 0, starting = 0;
    for (const auto& r : records_) {
      if (r.status == "pending") ++never_placed;
      if (r.starting) ++starting;
    }
    for (const auto& r : records_)
      if (r.status == "pending") metrics_.refused(r.reason.empty() ? "StillPending" : r.reason);
    s["scenario"] = name;
    s["policy"] = options_.policy;
    s["seed"] = options_.seed;
    // With node groups: the fleet at the end (the summary's node_groups say more).
    s["nodes"] = autoscaler_ ? autoscaler_->nodes() : cluster_.size();
    s["gpus"] = autoscaler_ ? autoscaler_->gpus() : cluster_.device_count();
    s["pods"] = workload_.size() - starting;
    s["placements"] = placed_;
    s["failed"] = failed_ + never_placed;
    s["refused"] = failed_;
    s["pending_at_end"] = never_placed;
    s["wall_seconds"] = wall;
    s["pods_per_second"] = wall > 0 ? static_cast<double>(workload_.size()) / wall : 0.0;
    s["simulated_seconds"] = engine_.now();
    s["simulated_time"] = human_duration(engine_.now());
    // What a run's figures can mean depends on its kind: with nothing
    // leaving (the study's model) the run is a fill, read by arrived demand
    // and the final state; when pods come and go the end is empty and
    // arrived demand grows without bound, so allocation is read over time.
    // A snapshot run starts from a cluster's usage: arrived demand leaves
    // that out, so its curve means nothing there either.
    s["run_kind"] = starting_ ? "snapshot" : departures_ ? "departures" : "no-departures";
    s["typical_pod_shapes"] = typical_pods_.size();
    const TimelineRow last = metrics_.row(engine_.now(), running_.size(), pending_.size(), placed_, failed_);
    const Metrics::Held held = metrics_.held(engine_.now());
    if (!departures_) {
      s["final_alloc_gpu_pct"] = last.alloc_gpu_pct;
      s["final_alloc_memory_pct"] = last.alloc_memory_pct;
      s["final_alloc_cores_pct"] = last.alloc_cores_pct;
      s["final_frag_gpu_pct"] = last.frag_gpu_pct;
    } else {
      s["alloc_gpu_pct_time_weighted"] = held.gpu_pct;
      s["alloc_memory_pct_time_weighted"] = held.memory_pct;
      s["alloc_cores_pct_time_weighted"] = held.cores_pct;
    }
    s["peak_alloc_gpu_pct"] = held.peak_gpu_pct;
    s["peak_alloc_memory_pct"] = held.peak_memory_pct;
    s["peak_alloc_cores_pct"] = held.peak_cores_pct;
    if (!departures_ && !starting_) {
      s["arrived_gpu_pct"] = last.arrived_pct;
      nlohmann::ordered_json curve = nlohmann::ordered_json::array();
      for (const auto& v : metrics_.alloc_by_arrived())
        curve.push_back(v ? nlohmann::ordered_json(*v) : nullptr);
      s["alloc_ratio_by_arrived_pct"] = std::move(curve);
      nlohmann::ordered_json frag_curve = nlohmann::ordered_json::array();
      for (const auto& v : metrics_.frag_by_arrived())
        frag_curve.push_back(v ? nlohmann::ordered_json(*v) : nullptr);
      s["frag_ratio_by_arrived_pct"] = std::move(frag_curve);
      const auto at130 = metrics_.alloc_by_arrived()[130];
      s["alloc_ratio_at_130_pct"] = at130 ? nlohmann::ordered_json(*at130) : nullptr;
      s["unallocated_gpus_at_130_pct"] =
          at130 ? nlohmann::ordered_json((1 - *at130 / 100) * static_cast<double>(cluster_.device_count()))
                : nullptr;
    }
    // The percentiles count pods still waiting at the end with their wait
    // so far (a lower bound); this many of them.
    s["pending_includes_waiting"] = never_placed;
    s["pending_seconds"] = {{"p50", metrics_.percentile_pending(50)},
                            {"p95", metrics_.percentile_pending(95)},
                            {"p99", metrics_.percentile_pending(99)},
                            {"max", metrics_.max_pending()}};
    s["refusals_by_reason"] = metrics_.refusals();
    s["preemption"] = preemption_name(options_.preemption);
    s["preemptions"] = preemptions_;
    s["gpu_hours_lost_to_preemption"] = gpu_seconds_lost_ / 3600.0;
    // Preempted pods that ended evicted: bare ones, and those made again
    // that found no room in a run where nothing leaves.
    size_t ended_preempted = 0;
    for (const auto& r : records_) ended_preempted += r.status == "preempted";
    s["preempted_not_running_again"] = ended_preempted;
    if (priorities_differ_) {
      nlohmann::ordered_json by_class = nlohmann::ordered_json::object();
      for (auto& [label, by_label] : waits_by_class_) {
        std::vector<double>& waits = by_label;  // a lambda may not capture a structured binding (clang)
        std::sort(waits.begin(), waits.end());
        auto rank = [&](double pct) {
          const size_t r = static_cast<size_t>(std::ceil(pct / 100.0 * static_cast<double>(waits.size())));
          return waits[std::min(waits.size() - 1, r == 0 ? 0 : r - 1)];
        };
        by_class[label] = {{"placements", waits.size()},
                           {"p50", rank(50)},
                           {"p95", rank(95)},
                           {"p99", rank(99)},
                           {"max", waits.back()}};
      }
      s["pending_seconds_by_priority_class"] = std::move(by_class);
    }
    if (autoscaler_) {
      const nlohmann::ordered_json a = autoscaler_->summary(engine_.now());
      s["expander"] = a["expander"];
      s["node_groups"] = a["node_groups"];
      s["node_hours"] = a["node_hours"];
      s["cost"] = a["cost"];
    }
    s["interrupted"] = result_.interrupted;
  }

  struct Placement {
    size_t node;
    core::PodAllocation allocation;
  };
  // The pods running now, by pod: a table as long as the workload (a hash
  // map's lookups showed in preemption, which asks for many of them).
  class RunningPods {
   public:
    void reset(size_t pods) {
      placed_.assign(pods, {});
      running_.assign(pods, 0);
      count_ = 0;
    }
    void emplace(uint32_t id, Placement placement) {
      placed_.at(id) = std::move(placement);
      running_[id] = 1;
      ++count_;
    }
    const Placement* find(uint32_t id) const { return running_.at(id) ? &placed_[id] : nullptr; }
    const Placement& at(uint32_t id) const {
      if (!running_.at(id)) throw std::logic_error(fmt::format("pod {} is not running", id));
      return placed_[id];
    }
    void erase(uint32_t id) {
      placed_.at(id).allocation = {};
      running_[id] = 0;
      --count_;
    }
    size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }

   private:
    std::vector<Placement> placed_;
    std::vector<uint8_t> running_;
    size_t count_ = 0;
  };

  // Typical pods are counted over the trace itself, not the study's extra draws.
  // The typical pods FGD and the fragmentation measure fit with HAMi's
  // rules: the workload in HAMi's terms (pods HAMi cannot say are left out),
  // whatever dialect the run's policy reads.
  static std::vector<core::TypicalPod> trace_typical_pods(const Workload& w) {
    const TranslatedWorkload hami = translate_workload(w, core::Dialect::Hami);
    const Workload& form = hami.copied ? hami.copy : w;
    std::vector<size_t> counted;
    for (size_t i = 0; i < form.size(); ++i)
      if (!form[i].resampled && (!form[i].running_on || form[i].request.wants_devices()) &&
          (hami.problems.empty() || hami.problems[i].empty()))
        counted.push_back(i);
    return core::typical_pods(counted.size(),
                              [&](size_t i) -> const core::PodRequest& { return form[counted[i]].request; });
  }

  TranslatedWorkload translated_;
  core::Cluster cluster_;
  const Workload& workload_;
  RunOptions options_;
  std::vector<core::TypicalPod> typical_pods_;
  std::shared_ptr<core::FragmentationModel> fragmentation_;  // shared by Metrics and FGD
  Metrics metrics_;
  std::unique_ptr<CardUseLog> card_use_log_;  // when the run keeps card_use
  std::vector<RunObserver*> observers_;
  std::unique_ptr<core::Policy> policy_;
  // The unit whose binding records carry (claim_allocation; DRA's under --policy dra), or none.
  const core::dialects::DialectUnit* binding_unit_ = nullptr;
  core::Scheduler scheduler_;
  // The namespaces' quotas with their pods' usage; the limits alone (for
  // pods no departure could make room for); null quota_: no limits.
  core::QuotaBook quotas_, quota_limits_;
  core::QuotaBook* quota_ = nullptr;
  RefusalExplainer explainer_;
  // pod -> request shape (never_fits, the explainer), found when first
  // asked: a run without refusals to explain never hashes a request.
  uint32_t shape_of(uint32_t id) {
    if (shape_of_[id] == UINT32_MAX) shape_of_[id] = shapes_.id(workload_[id].request);
    return shape_of_[id];
  }
  core::RequestShapes shapes_;
  std::vector<uint32_t> shape_of_;
  Engine engine_;
  std::vector<PodRecord> records_;
  std::deque<uint32_t> pending_;
  std::unique_ptr<core::Cluster> empty_fleet_;  // for never_fits
  std::unique_ptr<core::Policy> fit_policy_;
  core::Scheduler fit_scheduler_;
  std::vector<int8_t> never_fits_;  // by request shape: -1 unknown, 0 fits, 1 never
  RunningPods running_;
  // Preemption's view of the running pods: by node, and how many run at
  // each priority (a pod with nobody below it skips the search). Each
  // node's list carries what preempt's walk reads of its pods, so the walk
  // does not visit their PodSpecs (hundreds of bytes each).
  std::vector<std::vector<OnNode>> running_on_node_;
  std::map<int32_t, size_t> running_by_priority_;
  std::vector<double> queued_at_;     // when each pod (last) joined the queue
  std::vector<double> expected_end_;  // its planned departure (kForever: none)
  std::vector<uint32_t> requeued_;    // preempted, to arrive again
  std::unique_ptr<core::VictimSelector> selector_;
  std::vector<uint32_t> evicting_;  // the chosen node's victims, most important first
  core::FitRule rule_ = core::FitRule::Devices;
  core::PreemptionQuestion question_;
  std::vector<uint32_t> on_node_;  // one node's offer (pods)
  // question_.running's places: the pod in each, and those free.
  std::vector<uint32_t> slot_pod_, free_slots_;
  std::mt19937_64 preemption_rng_;
  // One node's preemption verdict for a (request shape, priority), valid
  // at the node's version (UINT64_MAX: not known), with a candidate's
  // score as pickOneNodeForPreemption compares it (with the budgets'
  // allowance when the node was asked). The walk reads these in node
  // order, so the score sits in the same cache lines: kept apart, each
  // candidate's score was a cache miss.
  struct CachedVerdict {
    uint64_t version = UINT64_MAX;
    core::VictimsScore score;  // where candidate
    bool candidate = false;
    bool guarded = false;  // a budget guards one of its candidates: not kept
  };
  struct Verdicts {
    std::vector<CachedVerdict> nodes;  // by node
  };
  std::unordered_map<uint64_t, Verdicts> verdicts_;
  std::map<std::string, std::vector<double>> waits_by_class_;
  size_t preemptions_ = 0;
  double gpu_seconds_lost_ = 0;
  // Each snapshot budget's counts now; the scenario's pdb_protected budget's index (none: UINT32_MAX).
  std::vector<core::disruption::BudgetCounts> budget_counts_;
  uint32_t protected_budget_ = UINT32_MAX;
  bool priorities_differ_ = false;
  RunResult result_;
  size_t placed_ = 0, failed_ = 0, explained_ = 0, sample_every_ = 1;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
  bool departures_ = false, full_events_ = false, starting_ = false;
  // A pod that fits nowhere waits (pods leave, or a node group may grow);
  // else, in the study's fill, it is refused.
  bool queues_ = false;

  // Cluster Autoscaler (node groups): null in runs without them, which
  // then pay one pointer test per placement and nothing else.
  std::unique_ptr<Autoscaler> autoscaler_;
  bool scan_due_ = false;  // a ScaleUpScan is scheduled
  // Scans and scale-down checks scheduled: when they are all the engine
  // holds, nothing can change any more and a check is not planned again
  // (the run ends; a node kept at min or for its pods stays).
  size_t loop_events_ = 0;
  void schedule_loop(double at, EventKind kind, uint32_t node) {
    ++loop_events_;
    engine_.schedule(at, kind, node);
  }
  std::vector<uint8_t> drained_;  // by pod: taken off a node being removed (placed again, not counted twice)

  void start_autoscaler() {
    if (policy_->device_fit())
      throw core::InputError("node_groups", 0, "node_groups",
                             fmt::format("node groups are simulated with HAMi's fit; policy '{}' fits in its "
                                         "own dialect's terms",
                                         options_.policy));
    size_t group_nodes = 0;
    for (const auto& g : options_.node_groups) group_nodes += static_cast<size_t>(g.max);
    autoscaler_ =
        std::make_unique<Autoscaler>(options_.node_groups, options_.autoscaler, cluster_.size() - group_nodes,
                                     cluster_, metrics_, options_.seed, options_.gpu_policy);
    drained_.assign(workload_.size(), 0);
    // Nodes Ready from the start (each group's min and a snapshot's members)
    // are watched from now: a member's pods, placed at time 0, count at once.
    for (size_t n = 0; n < cluster_.size(); ++n)
      if (autoscaler_->manages(n)) watch_utilization(n);
  }

  // Node groups: the run ends when nothing is pending or running and every
  // group is back at its minimum (checks still planned would change nothing).
  bool autoscaled_run_over() const {
    return running_.empty() && pending_.empty() && requeued_.empty() && engine_.pending() == loop_events_ &&
           autoscaler_->at_min();
  }

  void request_scan() {
    if (scan_due_) return;
    scan_due_ = true;
    schedule_loop(autoscaler_->next_scan(engine_.now()), EventKind::ScaleUpScan, 0);
  }

  // A group node's use changed: once it is below its group's threshold, its
  // scale-down is checked when the unneeded time has passed.
  void watch_utilization(size_t node) {
    const double at = autoscaler_->usage_changed(node, engine_.now());
    if (at >= 0) schedule_loop(at, EventKind::ScaleDownCheck, static_cast<uint32_t>(node));
  }

  // CA's loop, scale-up half: one expansion for the pods waiting.
  void scale_up_scan() {
    scan_due_ = false;
    std::vector<PendingPod> pending;
    pending.reserve(pending_.size());
    for (uint32_t id : pending_) pending.push_back({id, &workload_[id].request, shape_of(id)});
    const auto up = autoscaler_->scale_up(engine_.now(), pending);
    if (!up) return;
    const NodeGroupSpec& g = autoscaler_->group(up->group);
    if (options_.records) {
      const std::string info = fmt::format("[{{{} {}->{} (max: {})}}]", g.name, up->from, up->to, g.max);
      for (uint32_t id : up->pods)
        event(id, {"Normal", "TriggeredScaleUp", "pod triggered scale-up: " + info});
    }
    for (size_t n : up->nodes)
      engine_.schedule(engine_.now() + g.scale_up_delay, EventKind::NodeReady, static_cast<uint32_t>(n));
    sample();
    // CA's next loop may grow another group for the pods this one cannot take.
    if (up->pods.size() < pending.size()) {
      scan_due_ = true;
      schedule_loop(engine_.now() + autoscaler_->spec().scan_interval, EventKind::ScaleUpScan, 0);
    }
  }

  void node_ready(size_t node) {
    autoscaler_->node_ready(node, engine_.now());
    watch_utilization(node);
    retry_pending();
    requeue_preempted();
    // Pods the real scheduler placed otherwise than the estimate did may
    // still wait: CA's next loop looks at them.
    if (!pending_.empty()) request_scan();
    sample();
  }

  // CA's loop, scale-down half, for one node unneeded long enough.
  void scale_down_check(size_t node) {
    std::vector<PodOnNode> pods;
    for (const OnNode& on : running_on_node_[node])
      pods.push_back({on.id, &workload_[on.id].request, &running_.at(on.id).allocation,
                      workload_[on.id].controlled, workload_[on.id].pdb_protected});
    mark_budget_blocked(pods);
    const Autoscaler::Check c = autoscaler_->check_scale_down(node, engine_.now(), pods);
    if (c.verdict == Autoscaler::Verdict::Later && engine_.pending() > loop_events_)
      schedule_loop(c.again, EventKind::ScaleDownCheck, static_cast<uint32_t>(node));
    if (c.verdict != Autoscaler::Verdict::Remove) return;
    const std::string& name = cluster_.node(node).name;
    if (options_.records)
      result_.events.push_back({engine_.now(), "", "Normal", "ScaleDown",
                                "marked the node as toBeDeleted/unschedulable", "", name});
    for (const PodOnNode& p : pods) drain(p.id, node);
    autoscaler_->remove(node, engine_.now());
    if (options_.records)
      result_.events.push_back(
          {engine_.now(), "", "Normal", "ScaleDown", "node removed by cluster autoscaler", "", name});
    requeue_preempted();                    // the drained pods, made again by their controllers
    if (!pending_.empty()) request_scan();  // the group has room again
    sample();
  }

  // Cluster Autoscaler's PDB rule for draining a node (its remaining-PDB
  // tracker's CanRemovePods): a pod matched by a budget allowing no
  // disruption (disruptionsAllowed < 1) blocks the node; a budget allowing
  // fewer than it matches here only makes CA drain the pods one by one,
  // which the run does not time. CA matches as the disruption controller
  // does (an empty selector matches every pod of the namespace:
  // counted_by_budgets) and reads status.disruptionsAllowed, which the run
  // keeps live.
  void mark_budget_blocked(std::vector<PodOnNode>& pods) const {
    if (std::none_of(pods.begin(), pods.end(),
                     [&](const PodOnNode& p) { return !workload_[p.id].counted_by_budgets.empty(); }))
      return;
    std::vector<int32_t> allowed;
    disruptions_allowed(allowed);
    for (PodOnNode& p : pods)
      for (uint32_t b : workload_[p.id].counted_by_budgets)
        if (allowed[b] < 1) p.pdb_protected = true;
  }

  // A pod on a node CA removes: evicted, made again by its controller.
  void drain(uint32_t id, size_t node) {
    if (options_.records) event(id, {"Normal", "ScaleDown", "deleting pod for node scale down"});
    take_off(id, node);
    autoscaler_->count_evicted(node);
    drained_[id] = 1;
    auto& r = records_[id];
    expected_end_[id] = kForever;
    r.status = "pending";
    r.node.clear();
    r.allocation.clear();
    r.start = -1;
    queued_at_[id] = engine_.now();
    requeued_.push_back(id);
  }
};

}  // namespace

std::optional<Preemption> parse_preemption(std::string_view text) {
  if (text == "off") return Preemption::Off;
  if (text == "kube") return Preemption::Kube;
  if (text == "hami-aware") return Preemption::HamiAware;
  return std::nullopt;
}

std::string_view preemption_name(Preemption p) {
  switch (p) {
    case Preemption::Off:
      return "off";
    case Preemption::Kube:
      return "kube";
    case Preemption::HamiAware:
      return "hami-aware";
  }
  return "?";
}

RunResult simulate(const core::Cluster& fleet, const Workload& workload, const RunOptions& options,
                   const std::string& scenario_name) {
  if (!options.node_groups.empty()) {
    Run run(fleet_with_groups(fleet, options.node_groups), workload, options);
    return run.go(scenario_name);
  }
  Run run(fleet, workload, options);
  return run.go(scenario_name);
}

RunOptions scenario_options(const Scenario& scenario) {
  RunOptions o;
  o.policy = scenario.policy;
  o.gpu_policy = scenario.gpu_policy;
  o.seed = scenario.seed;
  o.queue = scenario.queue;
  return o;
}

RunResult simulate(const Scenario& scenario, const RunOptions& given) {
  // Before the stream is generated: a run too big for the memory left is
  // refused with its estimate, not killed half-way (docs/simulator.md#memory).
  guard_run_memory(run_size(scenario), given.card_use);
  const Workload w = materialize(scenario, given.seed);
  // The snapshot's quotas, then the scenario's, then the caller's (--quotas).
  RunOptions options = given;
  if (!scenario.node_groups.empty()) {
    options.node_groups = scenario.node_groups;
    options.autoscaler = scenario.autoscaler;
  }
  if (scenario.snapshot || !scenario.quotas.empty()) {
    options.quotas.clear();
    if (scenario.snapshot) options.quotas = scenario.snapshot->quotas;
    options.quotas.insert(options.quotas.end(), scenario.quotas.begin(), scenario.quotas.end());
    options.quotas.insert(options.quotas.end(), given.quotas.begin(), given.quotas.end());
  }
  if (scenario.snapshot) options.disruption_budgets = scenario.snapshot->budgets;
  // The study's replay: its node order too (never with a snapshot, whose
  // placed pods name nodes by position).
  if (scenario.openb_pods_csv && scenario.openb.resample && !scenario.snapshot)
    return simulate(study_node_order(scenario.fleet, options.seed), w, options, scenario.name);
  RunResult r = simulate(scenario.fleet, w, options, scenario.name);
  if (scenario.snapshot) {
    const ClusterSnapshot& snap = *scenario.snapshot;
    size_t placed = 0, refused = 0, waiting = 0;
    for (const auto& p : r.pods) {
      if (p.origin != "queue") continue;
      if (p.start >= 0)
        ++placed;
      else if (p.status == "refused")
        ++refused;
      else
        ++waiting;
    }
    nlohmann::ordered_json j;
    j["source"] = snap.source;
    j["nodes"] = snap.nodes.size();
    j["added_nodes"] = scenario.fleet.size() - snap.nodes.size();
    j["running_gpu_pods"] = snap.running_gpu_pods;
    j["queue"] = snap.queue.size();
    j["queue_placed"] = placed;
    j["queue_refused"] = refused;
    j["queue_still_pending"] = waiting;
    j["skipped"] = snap.skipped;
    j["warnings"] = snap.warnings;
    r.summary["snapshot"] = std::move(j);
  }
  return r;
}

}  // namespace gpuslice::sim
