#include "gpuslice/sim/simulator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <stdexcept>

#include "card_use_log.hpp"
#include "gpuslice/core/codec/allocation_annotation.hpp"
#include "gpuslice/core/codec/mig_allocations.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/place.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/request_shape.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/core/translate.hpp"
#include "gpuslice/sim/engine.hpp"
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
    observers_.push_back(&metrics_);
    if (o.card_use) {
      card_use_log_ = std::make_unique<CardUseLog>(result_.card_use);
      observers_.push_back(card_use_log_.get());
    }
    metrics_.observe_curve();  // the study's first record: nothing arrived yet
    records_.resize(w.size());
    shape_of_.assign(w.size(), UINT32_MAX);
    for (const auto& p : w) {
      if (p.duration != kForever) departures_ = true;
      if (p.running_on) starting_ = true;
    }
    full_events_ = cluster_.size() <= 64;
    // A grid reading only the summary and curves needs a coarse timeline.
    sample_every_ = std::max<size_t>(1, w.size() / (o.records ? 10000 : 200));
  }

  RunResult go(const std::string& name) {
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < workload_.size(); ++i) {
      const auto& p = workload_[i];
      PodRecord& r = records_[i];
      r = PodRecord{};
      if (options_.records) r.name = p.name.empty() ? p.request.name : p.name;
      r.kind = p.kind;
      r.status = "pending";
      r.arrival = p.arrival;
      r.gpu_milli = p.gpu_milli;
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
      if (e.kind == EventKind::Arrival)
        arrive(e.pod);
      else
        depart(e.pod);
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
        records_[id].shortfall = core::shortfall(cluster_, workload_[id].request);
      if (!result_.interrupted) metrics_.pending_time(engine_.now() - workload_[id].arrival);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    summarize(name, wall);
    result_.pods = std::move(records_);
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
    core::Scheduler::commit(cluster_, p.request, d, *policy_);
    moved(&RunObserver::placed, id, *d.node, d.allocation);
    auto& r = records_[id];
    r.starting = true;
    r.start = 0;
    r.status = "running";
    if (options_.records) {
      r.node = cluster_.node(*d.node).name;
      r.allocation = core::codec::encode_allocation(d.allocation, cluster_.node(*d.node));
      r.mig_allocations = core::codec::encode_mig_allocations(d.allocation, cluster_.node(*d.node));
    }
    if (p.duration != kForever) engine_.schedule(p.duration, EventKind::Departure, id);
    running_.emplace(id, Placement{*d.node, std::move(d.allocation)});
  }

  // The first attempt of a small fleet's pod keeps HAMi's full report (its
  // events); retries of waiting pods only need the choice.
  bool try_place(uint32_t id, bool first_attempt = false) {
    const auto& p = workload_[id];
    const core::Detail detail = full_events_ && first_attempt ? core::Detail::Full : core::Detail::Minimal;
    core::Decision d = scheduler_.place(cluster_, p.request, *policy_, detail);
    if (!d.placed()) {
      // A snapshot run's pods say in numbers how close the best card came.
      if (options_.records && !p.origin.empty() && records_[id].shortfall.empty() && !policy_->device_fit())
        records_[id].shortfall = core::shortfall(cluster_, p.request);
      if (!options_.records || !records_[id].reason.empty() || explained_ >= options_.explain_limit)
        return false;
      if (detail == core::Detail::Full)
        explain(id, d);
      else if (full_events_)
        explain(id, scheduler_.place(cluster_, p.request, *policy_, core::Detail::Full));
      else
        explain_by_counts(id);
      return false;
    }
    core::Scheduler::commit(cluster_, p.request, d, *policy_);
    moved(&RunObserver::placed, id, *d.node, d.allocation);
    auto& r = records_[id];
    if (options_.records) {
      r.node = cluster_.node(*d.node).name;
      r.allocation = core::codec::encode_allocation(d.allocation, cluster_.node(*d.node));
      r.mig_allocations = core::codec::encode_mig_allocations(d.allocation, cluster_.node(*d.node));
    }
    r.start = engine_.now();
    r.status = "running";
    metrics_.pending_time(engine_.now() - p.arrival);
    ++placed_;
    if (!d.events.empty()) event(id, d.events.front());
    if (p.duration != kForever) engine_.schedule(engine_.now() + p.duration, EventKind::Departure, id);
    running_.emplace(id, Placement{*d.node, std::move(d.allocation)});
    return true;
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
  }

  void event(uint32_t id, const core::Event& e) {
    result_.events.push_back({engine_.now(), workload_[id].request.name, e.type, e.reason, e.message});
  }

  void arrive(uint32_t id) {
    for (RunObserver* o : observers_) o->arrived(engine_.now(), workload_[id]);
    if (!translated_.problems.empty() && !translated_.problems[id].empty()) {
      records_[id].reason = "Untranslatable";
      event(id, {"Warning", "Untranslatable",
                 fmt::format("{} cannot carry the request: {}", options_.policy, translated_.problems[id])});
      refuse(id);
      metrics_.observe_curve();
      return;
    }
    // FIFO keeps arrival order: nobody passes a pod that is already waiting.
    const bool must_queue = options_.queue == QueueDiscipline::Fifo && !pending_.empty();
    if (must_queue || !try_place(id, true)) {
      if (!departures_) {
        refuse(id);  // nothing ever leaves (the study's model): the pod is refused
      } else if (never_fits(id)) {
        // It fits no node even with the fleet empty: queueing it would block
        // a FIFO queue forever. Refused, with HAMi's reason for it.
        if (must_queue) try_place(id, true);  // cannot place; records why
        const std::string why =
            policy_->device_fit()
                ? fmt::format("fits no node of the empty fleet in {}'s terms", options_.policy)
                : core::shortfall(*empty_fleet_, workload_[id].request);
        event(id, {"Warning", "NeverFits", why});
        if (options_.records && !workload_[id].origin.empty())
          records_[id].shortfall = "on the empty fleet it " + why;
        refuse(id);
      } else {
        pending_.push_back(id);
      }
    }
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
    records_[id].status = "refused";
    if (records_[id].reason.empty()) records_[id].reason = "Unexplained";
    metrics_.refused(records_[id].reason);
    ++failed_;
  }

  void depart(uint32_t id) {
    auto it = running_.find(id);
    const auto& p = workload_[id];
    cluster_.release(it->second.node, it->second.allocation, p.request.host);
    core::unreserved(*policy_, cluster_.view(it->second.node), p.request, it->second.allocation);
    moved(&RunObserver::departed, id, it->second.node, it->second.allocation);
    records_[id].end = engine_.now();
    records_[id].status = "completed";
    running_.erase(it);
    retry_pending();
  }

  void retry_pending() {
    if (options_.queue == QueueDiscipline::Fifo) {
      while (!pending_.empty() && try_place(pending_.front())) pending_.pop_front();
      return;
    }
    for (auto it = pending_.begin(); it != pending_.end();) it = try_place(*it) ? pending_.erase(it) : it + 1;
  }

  void sample() {
    result_.timeline.push_back(
        metrics_.row(engine_.now(), running_.size(), pending_.size(), placed_, failed_));
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
    s["nodes"] = cluster_.size();
    s["gpus"] = cluster_.device_count();
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
    s["interrupted"] = result_.interrupted;
  }

  struct Placement {
    size_t node;
    core::PodAllocation allocation;
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
  core::Scheduler scheduler_;
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
  std::unordered_map<uint32_t, Placement> running_;
  RunResult result_;
  size_t placed_ = 0, failed_ = 0, explained_ = 0, sample_every_ = 1;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
  bool departures_ = false, full_events_ = false, starting_ = false;
};

}  // namespace

RunResult simulate(const core::Cluster& fleet, const Workload& workload, const RunOptions& options,
                   const std::string& scenario_name) {
  Run run(fleet, workload, options);
  return run.go(scenario_name);
}

RunResult simulate(const Scenario& scenario, const RunOptions& options) {
  const Workload w = materialize(scenario, options.seed);
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
