// The extender's decision state: the cluster as the core sees it, what each
// pod holds (observed from the feed, reserved by a filter, committed by a
// bind), and the node locks HAMi's device plugin expects. One writer: every
// change to it (feed events, filters, binds, expiry) happens under one
// mutex, so two filters never hand out the same capacity. API calls (the
// writer's patches, bindings, events) run outside that mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/place.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/serve/cluster_io.hpp"
#include "gpuslice/serve/preemption_protocol.hpp"
#include "gpuslice/serve/protocol.hpp"

namespace gpuslice::serve {

using Clock = std::function<std::chrono::system_clock::time_point()>;

// A node group's card registration for Cluster Autoscaler's template nodes
// that carry none (a group scaled from zero: the provider builds the
// template from the group's capacity and labels only). A template with no
// registration annotation whose labels include all of `labels` is read as
// if it had `registration` (docs/serve.md#cluster-autoscaler-the-dry-run-filter).
struct TemplateRegistration {
  std::map<std::string, std::string> labels;
  std::string registration;  // hami.io/node-nvidia-register's value
};

struct StateOptions {
  std::string policy = "hami";  // hami follows the pod's annotations; else the core's registry
  std::chrono::milliseconds reservation_ttl{std::chrono::seconds(60)};
  std::chrono::milliseconds node_lock_timeout{std::chrono::minutes(5)};  // HAMi's NodeLockTimeout
  // Without a cluster nobody plays HAMi's device plugin, which releases the
  // node lock once the pod's devices are allocated: the snapshot mode does
  // that itself right after a bind.
  bool release_lock_after_bind = false;
  Clock clock;  // empty: system_clock::now
  core::codec::RequestDefaults defaults;
  // Filters naming at most this many nodes get HAMi's full report (every
  // fitting node's score in the FilteringSucceed event). Larger ones take
  // the ranked fast path: the same node and cards, a shorter event. A pod
  // that fits nowhere always gets every node's reason.
  size_t full_report_nodes = 256;
  // A pod refused again, of the same shape on the same named nodes, gets the
  // last refusal's answer while every node changed since refuses it alike
  // (refusal_memo.hpp). Off: every refusal is built afresh (the tests'
  // reference).
  bool reuse_refusals = true;
  // Cluster Autoscaler's simulated nodes (template_nodes.hpp): a template
  // family nobody asked about this long is forgotten, and at most this many
  // simulated nodes are kept.
  std::chrono::milliseconds dry_run_idle{std::chrono::seconds(2)};
  size_t dry_run_max_nodes = 4096;
  std::vector<TemplateRegistration> template_registrations;  // --template-registration
};

// What a filter decided, for metrics. DryRun: Cluster Autoscaler's
// simulation (a `Nodes` request naming a node serve does not know),
// answered without reserving or writing anything.
enum class FilterOutcome { Placed, Unschedulable, PassThrough, Error, DryRun };
const char* outcome_name(FilterOutcome outcome);

// One card's use, for /metrics.
struct CardUse {
  std::string node, uuid, type;
  int index = 0;
  int64_t memory_mib = 0, memory_used_mib = 0;
  int32_t cores = 0, cores_used = 0, slots_used = 0;
};

class RefusalMemo;
class TemplateNodes;

class DecisionState final : public ClusterSink, public DecodedSink {
 public:
  DecisionState(StateOptions options, ClusterWriter& writer);
  ~DecisionState() override;

  // The feed's view of the cluster, as the reader decodes it: each object is
  // read into what decisions need (serve.md names the bytes) and dropped.
  DecodedSink* decoded() override { return this; }
  void replace_all(std::vector<core::codec::NodeObject> nodes,
                   std::vector<core::codec::PodObject> pods) override;
  void node_changed(WatchKind kind, core::codec::NodeObject object) override;
  void pod_changed(WatchKind kind, core::codec::PodObject object) override;
  void quotas_replaced(std::vector<core::NamespaceQuota> quotas) override;
  void quota_changed(WatchKind kind, core::NamespaceQuota quota) override;
  // The same from the API's JSON (tools and tests), decoded by the same reader.
  void replace_all(const std::vector<nlohmann::json>& nodes,
                   const std::vector<nlohmann::json>& pods) override;
  void node_changed(WatchKind kind, const nlohmann::json& object) override;
  void pod_changed(WatchKind kind, const nlohmann::json& object) override;

  ExtenderFilterResult filter(const ExtenderArgs& args, FilterOutcome* outcome = nullptr);
  // The error text ("" on success) for ExtenderBindingResult.
  std::string bind(const ExtenderBindingArgs& args);
  // The preempt verb (docs/serve.md#preemption): for each node offered, the
  // lower-priority pods kube-scheduler's reprieve keeps as victims when the
  // pod's fit is HAMi's (core/preemption.hpp); a node where no eviction
  // makes room, or where the pod fits already, is left out. Changes
  // nothing: the victims leave through the feed when kube-scheduler
  // deletes them. Throws ProtocolError when the pod cannot be read.
  ExtenderPreemptionResult preempt(const ExtenderPreemptionArgs& args);

  bool ready() const;
  std::vector<CardUse> card_use();
  size_t reservation_count();
  uint64_t expired_count() const;
  // Refusals answered from the last refusal's kept answer (refusal_memo.hpp).
  uint64_t refusals_reused_count() const;
  // HAMi's quota entries (namespace, resource, used, limit) for its gauges
  // (reservations past their time returned first, as card_use does).
  std::vector<core::QuotaBook::Entry> quota_entries();
  // What the namespace's held pods count against its quota now.
  core::QuotaUse quota_used(const std::string& ns);
  // HAMi FitQuota for the admission webhook: whether the namespace's limits
  // hold what its pods hold now plus `request` (true without a limit).
  bool quota_admits(const std::string& ns, const core::QuotaUse& request);

 private:
  enum class Kind { Observed, Reserved, Binding, Bound };
  struct Held {
    core::Holding holding;
    Kind kind = Kind::Observed;
    std::chrono::system_clock::time_point expiry{};
    PodRef ref;
    core::PodRequest request;  // for the policy's unreserve hook
    uint64_t generation = 0;   // which filter made it
    // What preemption reads, kept when the feed shows the pod: spec.priority
    // and status.startTime in seconds (nullopt: not started).
    std::optional<int32_t> priority;
    std::optional<double> started;
  };
  struct NodeLock {
    std::chrono::system_clock::time_point at{};
    std::string ns, name;
  };

  // A node as the feed shows it: what identifies its registration (so a
  // change elsewhere, HAMi's handshake or the lock, does not re-read it) and
  // the registration as the core reads it (nullopt: unreadable, skipped).
  struct NodeRecord {
    std::pair<uint64_t, uint64_t> fingerprint{};
    std::optional<core::Node> parsed;
  };
  // A pod as the feed shows it: HAMi's reading of it (request, node, grants,
  // phase), or nothing when it cannot be read (then it holds nothing).
  struct PodSeen {
    std::string key;
    std::string phase;
    bool bound = false;  // spec.nodeName set
    std::optional<core::codec::PodDocument> doc;
  };

  std::chrono::system_clock::time_point now() const;
  void charge(Held& held);
  void release(Held& held);
  void drop(const std::string& key);
  void expire();
  void schedule_expiry(const std::string& key, const Held& held);
  void rebuild();
  NodeRecord read_node(const core::codec::NodeObject& object, const NodeRecord* before) const;
  PodSeen read_pod(const core::codec::PodObject& object) const;
  void note_lock(const core::codec::NodeObject& object, bool deleted);
  // What the feed shows of a pod (`doc` null: unreadable, it holds nothing).
  void observe_pod(const std::string& key, std::string_view phase, bool bound,
                   const core::codec::PodDocument* doc, bool deleted);
  void remember_pod(PodSeen&& pod);
  // kube-scheduler's nominated pods (status.nominatedNodeName set, not
  // bound), which serve holds room for (decision_nominated.cpp).
  struct Nomination {
    std::string node;
    int32_t priority = 0;
    core::PodRequest request;
  };
  void note_nomination(const PodSeen& pod, bool deleted);
  // The cards of nominated pods of at least the filtered pod's priority,
  // charged on the named nodes for one decision (addGENominatedPods); the
  // nodes where one does not fit are taken out of `named` and refused.
  struct NominationHold {
    std::vector<std::pair<core::Holding, const core::PodRequest*>> charged;  // and whose
    std::vector<std::pair<size_t, std::string>> refused;  // node, the nominated pod (ns/name)
    bool any() const { return !charged.empty() || !refused.empty(); }
  };
  std::string key_of(const std::string& uid, const std::string& ns, const std::string& name) const;

  // One filter's steps, in the order filter() takes them (decision_state.cpp).
  struct FilterPod;   // the pod as sent: who it is, what it asks
  struct Candidates;  // the named nodes, looked up
  struct Choice;      // what was decided, for the API calls after the lock
  FilterPod read_filter_pod(const ExtenderArgs& args) const;
  void warn_once(const FilterPod& pod);
  Choice decide(const FilterPod& pod, const std::vector<std::string>& names, ExtenderFilterResult& result);
  Candidates candidates_of(const std::vector<std::string>& names);
  bool answer_from_memo(const core::PodRequest& pod, Choice& choice, ExtenderFilterResult& result);
  void reserve(const FilterPod& pod, size_t asked, Choice& choice);
  NominationHold hold_nominations(const FilterPod& pod, Candidates& named);
  void release_nominations(const NominationHold& hold, ExtenderFilterResult& result);
  void write_refusal(const Candidates& named, core::Decision& decision, ExtenderFilterResult& result);
  bool write_placement(const FilterPod& pod, const Choice& choice, ExtenderFilterResult& result);
  void record_filter_event(const PodRef& ref, const std::string& type, const std::string& reason,
                           const std::string& message);
  // Cluster Autoscaler's dry run (decision_dry_run.cpp): known nodes as a
  // filter decides among them, the others from their objects; nothing held.
  bool holds_unknown_node(const ExtenderArgs& args) const;
  ExtenderFilterResult dry_run_filter(const FilterPod& pod, const ExtenderArgs& args, FilterOutcome& outcome);

  StateOptions options_;
  ClusterWriter& writer_;
  mutable std::mutex mutex_;
  std::mutex warned_mutex_;                      // guards warned_pods_ (filters run in parallel)
  std::unordered_set<std::string> warned_pods_;  // pods whose request warnings were said
  bool ready_ = false;
  core::Cluster cluster_;
  std::unique_ptr<core::Policy> policy_;
  core::Scheduler scheduler_;
  std::map<std::string, NodeRecord> nodes_;  // name -> the node (feed)
  std::vector<std::string> node_order_;      // as the feed listed them: ties go to the first
  std::unordered_map<std::string, core::codec::PodDocument> pods_;  // key -> HAMi's reading of a pod (feed)
  std::unordered_map<std::string, Held> held_;            // key (uid, else ns/name) -> what it holds
  std::map<std::string, Nomination> nominated_;           // key -> a pending pod's nomination (feed)
  std::unordered_map<std::string, NodeLock> node_locks_;  // node -> hami.io/mutex.lock
  uint64_t generation_ = 0;
  uint64_t expired_ = 0;
  uint64_t refusals_reused_ = 0;
  // The cluster id of each name kube-scheduler sent last (-1: unregistered).
  const std::vector<int64_t>& node_ids(const std::vector<std::string>& names);
  std::vector<std::string> last_names_;
  std::vector<int64_t> last_ids_;
  uint64_t names_epoch_ = 0;       // cluster_.epoch() they were looked up in (a rebuild makes a new one)
  uint64_t names_generation_ = 0;  // bumped each time the names are looked up afresh
  std::vector<uint64_t> named_;    // node -> the filter that last named it (repeats count once)
  uint64_t named_stamp_ = 0;
  // Reservations by expiry, soonest first: (expiry, generation, key). An
  // entry whose reservation was bound, replaced or dropped is skipped.
  std::set<std::tuple<std::chrono::system_clock::time_point, uint64_t, std::string>> expiries_;
  std::unique_ptr<RefusalMemo> refusals_;     // the last refusal's answer
  std::unique_ptr<TemplateNodes> templates_;  // CA's simulated nodes: never part of cluster_
  // The namespaces' quotas and what every held pod counts against them
  // (charged and released with the cluster); the ResourceQuota objects by
  // namespace/name, for HAMi's update and delete (the old limits go).
  core::QuotaBook quotas_;
  std::map<std::string, core::NamespaceQuota> quota_objects_;
  // Whether the pod's namespace could refuse it (the scheduler then checks
  // its quota): its refusal is then not kept, as a quota moves without any
  // node changing. The largest card is kept per cluster epoch.
  bool quota_may_refuse(const core::PodRequest& pod);
  int64_t largest_card_mib_ = 0;
  uint64_t largest_card_epoch_ = 0;
};

}  // namespace gpuslice::serve
