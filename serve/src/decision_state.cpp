#include "gpuslice/serve/decision_state.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <iostream>

#include "api_objects.hpp"
#include "filter_steps.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/dialects/hami/policy.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/dialect_check.hpp"
#include "refusal_memo.hpp"
#include "rfc3339.hpp"
#include "template_nodes.hpp"

namespace gpuslice::serve {

namespace {

// A held pod's MIG instances across a node list reload: the grants text
// carries no placement, so each grant keeps its instance where its card is
// still in MIG mode with a profile of that name (otherwise the instance is
// gone with the registration, as the grant's memory would be).
void keep_mig_instances(const core::PodAllocation& before, const core::Node& old_node, const core::Node& node,
                        core::PodAllocation& after) {
  for (size_t c = 0; c < before.containers.size() && c < after.containers.size(); ++c)
    for (size_t k = 0; k < before.containers[c].size() && k < after.containers[c].size(); ++k) {
      const core::DeviceGrant& was = before.containers[c][k];
      core::DeviceGrant& now = after.containers[c][k];
      if (!was.is_mig() || was.mig_profile < 0) continue;
      const auto& name = old_node.devices[static_cast<size_t>(was.device)]
                             .mig_profiles[static_cast<size_t>(was.mig_profile)]
                             .name;
      const core::Device& card = node.devices[static_cast<size_t>(now.device)];
      for (size_t p = 0; p < card.mig_profiles.size(); ++p)
        if (card.is_mig() && card.mig_profiles[p].name == name) {
          now.mig_profile = static_cast<int32_t>(p);
          now.mig_placement = was.mig_placement;
          break;
        }
    }
}

constexpr const char* kNodeLockAnnotation = "hami.io/mutex.lock";  // pkg/util/nodelock
constexpr const char* kAssignedTimeAnnotation = "hami.io/vgpu-time";
constexpr const char* kBindPhaseAnnotation = "hami.io/bind-phase";
constexpr const char* kBindTimeAnnotation = "hami.io/bind-time";

std::string rfc3339(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(t)));
}

int64_t unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// What identifies a node's registration: a change elsewhere (HAMi's
// handshake stamp, the lock, status heartbeats) does not re-read it. Two
// independent 64-bit hashes of its annotations, labels and host resources.
std::pair<uint64_t, uint64_t> node_fingerprint(const core::codec::NodeObject& node) {
  uint64_t fnv = 14695981039346656037ULL, mixed = 0x9e3779b97f4a7c15ULL;
  auto add = [&](std::string_view text) {
    for (unsigned char c : text) fnv = (fnv ^ c) * 1099511628211ULL;
    fnv = (fnv ^ 0xff) * 1099511628211ULL;  // a separator no text holds
    mixed ^= std::hash<std::string_view>{}(text) + 0x9e3779b97f4a7c15ULL + (mixed << 6) + (mixed >> 2);
  };
  auto add_map = [&](std::string_view tag, const core::codec::StringMap& m, bool annotations) {
    add(tag);
    for (const auto& e : m.entries) {
      if (annotations && (e.key.find("handshake") != std::string::npos || e.key == kNodeLockAnnotation))
        continue;
      add(e.key);
      add(e.value.text);
      add(std::string_view(reinterpret_cast<const char*>(&e.value.kind), 1));
    }
  };
  add_map("a", node.header.meta.annotations, true);
  add_map("l", node.header.meta.labels, false);
  add_map("alloc", node.allocatable, false);
  add_map("cap", node.capacity, false);
  return {fnv, mixed};
}

std::string text_of(const core::codec::Scalar& s) { return s.is_text() ? s.text : std::string(); }

// Objects from the API have no text left to name lines in.
class ApiContext final : public core::codec::ReadContext {
 public:
  explicit ApiContext(std::string source) : source_(std::move(source)) {}
  const std::string& source() const override { return source_; }
  int line_of(core::codec::Position) const override { return 0; }
  std::string_view raw_object() const override { return {}; }

 private:
  std::string source_;
};

std::string format_timeout(std::chrono::milliseconds d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return fmt::format("{}m{}s", s / 60, s % 60);  // Go's Duration.String for whole minutes/seconds
}

}  // namespace

const char* outcome_name(FilterOutcome outcome) {
  switch (outcome) {
    case FilterOutcome::Placed:
      return "placed";
    case FilterOutcome::Unschedulable:
      return "unschedulable";
    case FilterOutcome::PassThrough:
      return "pass-through";
    case FilterOutcome::Error:
      return "error";
    case FilterOutcome::DryRun:
      return "dry-run";
  }
  return "error";
}

DecisionState::DecisionState(StateOptions options, ClusterWriter& writer)
    : options_(std::move(options)), writer_(writer), refusals_(std::make_unique<RefusalMemo>()) {
  if (options_.policy == "hami") {
    core::register_hami_policies();
    policy_ = std::make_unique<core::HamiPolicy>();
  } else {
    if (std::string problem = core::policy_name_problem(options_.policy); !problem.empty())
      throw core::InputError("command line", 0, "--policy", problem);
    policy_ = core::make_policy(options_.policy);
  }
  // HAMi's quota check is its own fit's; another scheduler's knows none.
  if (policy_->dialect() == core::Dialect::Hami && !policy_->device_fit()) scheduler_.set_quotas(&quotas_);
  templates_ = std::make_unique<TemplateNodes>(
      options_.policy, TemplateNodes::Limits{options_.dry_run_idle, options_.dry_run_max_nodes},
      options_.template_registrations);
  templates_->set_quotas(scheduler_.quotas());
}

DecisionState::~DecisionState() = default;

std::chrono::system_clock::time_point DecisionState::now() const {
  return options_.clock ? options_.clock() : std::chrono::system_clock::now();
}

std::string DecisionState::key_of(const std::string& uid, const std::string& ns,
                                  const std::string& name) const {
  return uid.empty() ? "name:" + (ns.empty() ? std::string("default") : ns) + "/" + name : "uid:" + uid;
}

void DecisionState::charge(Held& held) {
  cluster_.charge(held.holding.node, held.holding.allocation, held.holding.host);
  quotas_.charge(held.request.ns, core::quota_use(held.holding.allocation));
  core::reserved(*policy_, cluster_.view(held.holding.node), held.request, held.holding.allocation);
}

void DecisionState::release(Held& held) {
  cluster_.release(held.holding.node, held.holding.allocation, held.holding.host);
  quotas_.release(held.request.ns, core::quota_use(held.holding.allocation));
  core::unreserved(*policy_, cluster_.view(held.holding.node), held.request, held.holding.allocation);
}

void DecisionState::drop(const std::string& key) {
  auto it = held_.find(key);
  if (it == held_.end()) return;
  release(it->second);
  held_.erase(it);
}

void DecisionState::schedule_expiry(const std::string& key, const Held& held) {
  expiries_.emplace(held.expiry, held.generation, key);
}

// A reservation no bind claimed in time goes back (HAMi keeps it forever).
// Only the due entries are looked at: a filter does not walk every pod.
void DecisionState::expire() {
  const auto t = now();
  while (!expiries_.empty() && std::get<0>(*expiries_.begin()) <= t) {
    const auto [at, generation, key] = *expiries_.begin();
    expiries_.erase(expiries_.begin());
    auto it = held_.find(key);
    if (it == held_.end() || it->second.kind != Kind::Reserved || it->second.generation != generation)
      continue;
    release(it->second);
    held_.erase(it);
    ++expired_;
  }
}

namespace {

// A node whose cards another dialect registers (KAI's labels) is named on
// stderr each time it is read: serve reads HAMi's registrations only, and
// never answers "node unregistered" without a word.
void note_unserved(core::codec::NodeDocument doc) {
  const std::string name = doc.node.name;
  std::vector<core::codec::NodeDocument> one;
  one.push_back(std::move(doc));
  std::vector<std::string> ignored;
  try {
    core::dialects::register_nodes(one, {}, "node " + name, ignored);
  } catch (const core::InputError&) {
    return;
  }
  if (one.front().node.devices.empty()) return;
  if (std::string note = unserved_node_note(name, one.front().node.cards_from); !note.empty())
    std::cerr << "gpuslice serve: " << note << "\n";
}

}  // namespace

// One node's registration as the core reads it; nullopt (and a line on
// stderr) when it cannot be read: one bad registration must not hide the
// others. A node whose registration did not change keeps its reading.
DecisionState::NodeRecord DecisionState::read_node(const core::codec::NodeObject& object,
                                                   const NodeRecord* before) const {
  NodeRecord r;
  r.fingerprint = node_fingerprint(object);
  if (before && before->fingerprint == r.fingerprint) {
    r.parsed = before->parsed;
    return r;
  }
  try {
    core::codec::NodeDocument doc =
        core::codec::node_document(object, ApiContext("node " + text_of(object.header.meta.name)));
    r.parsed = doc.node;
    if (!doc.registered) note_unserved(std::move(doc));
  } catch (const core::InputError& e) {
    std::cerr << "gpuslice serve: node skipped: " << e.what() << "\n";
  }
  return r;
}

// What decisions need of a pod: HAMi's reading of it, kept instead of the
// object (a line on stderr when it cannot be read: it then holds nothing).
DecisionState::PodSeen DecisionState::read_pod(const core::codec::PodObject& object) const {
  const auto& meta = object.header.meta;
  PodSeen p;
  p.key = key_of(text_of(meta.uid), text_of(meta.namespace_name), text_of(meta.name));
  p.phase = text_of(object.phase);
  p.bound = !text_of(object.node_name).empty();
  try {
    const std::string ns = text_of(meta.namespace_name);
    p.doc = core::codec::pod_document(object, ApiContext("pod " + ns + "/" + text_of(meta.name)),
                                      options_.defaults);
    // What a decision never reads is not kept.
    p.doc->created.clear();
    p.doc->created.shrink_to_fit();
    p.doc->expected_duration.clear();
    p.doc->expected_duration.shrink_to_fit();
  } catch (const core::InputError& e) {
    std::cerr << "gpuslice serve: pod not counted: " << e.what() << "\n";
  }
  return p;
}

void DecisionState::note_lock(const core::codec::NodeObject& object, bool deleted) {
  const std::string name = text_of(object.header.meta.name);
  const core::codec::Entry* lock = object.header.meta.annotations.find(kNodeLockAnnotation);
  const std::string value = lock ? text_of(lock->value) : std::string();
  if (deleted || value.empty())
    node_locks_.erase(name);
  else if (node_locks_.find(name) == node_locks_.end())
    node_locks_[name] = NodeLock{now(), "", value};  // held by someone else until released or timed out
}

// The cluster from the nodes' registrations (each read once: a watch event
// for one node re-reads that node, not the fleet).
void DecisionState::rebuild() {
  core::Cluster cluster;
  for (const auto& name : node_order_) {
    const auto& parsed = nodes_.at(name).parsed;
    if (parsed && !cluster.find(parsed->name)) cluster.add_node(*parsed);
  }
  // Ours first (they are newer than what the feed shows), re-resolved on
  // the new nodes; then what the feed shows for every other pod.
  std::unordered_map<std::string, Held> ours;
  for (auto& [key, h] : held_)
    if (h.kind != Kind::Observed) ours.emplace(key, std::move(h));
  held_.clear();
  quotas_.clear_usage();  // every held pod is charged again below
  // Stateful policies learn the new cluster from scratch, as it is charged.
  policy_ =
      options_.policy == "hami" ? std::make_unique<core::HamiPolicy>() : core::make_policy(options_.policy);
  const core::Cluster old = std::move(cluster_);
  cluster_ = std::move(cluster);
  for (auto& [key, h] : ours) {
    const auto id = cluster_.find(old.node(h.holding.node).name);
    if (!id) continue;
    try {
      const std::string text = core::codec::encode_allocation(h.holding.allocation, old.node(h.holding.node));
      core::PodAllocation moved = core::codec::resolve_allocation(
          core::codec::decode_allocation_text(text), cluster_.node(*id), h.request.init_containers.size());
      keep_mig_instances(h.holding.allocation, old.node(h.holding.node), cluster_.node(*id), moved);
      h.holding.allocation = std::move(moved);
      h.holding.node = *id;
      auto& placed = held_.emplace(key, std::move(h)).first->second;
      charge(placed);
      if (placed.kind == Kind::Reserved) schedule_expiry(key, placed);
    } catch (const core::CodecError&) {
      // The card it held is gone: nothing to keep.
    }
  }
  for (const auto& [key, doc] : pods_)
    if (!held_.count(key)) observe_pod(key, doc.phase, !doc.node_name.empty(), &doc, false);
}

// kube-scheduler names the same nodes in the same order filter after filter
// (its node cache), so the last list's lookups are kept until the list or
// the cluster's nodes change: comparing 10,000 names in order costs a tenth
// of hashing them.
const std::vector<int64_t>& DecisionState::node_ids(const std::vector<std::string>& names) {
  if (names_epoch_ == cluster_.epoch() && names == last_names_) return last_ids_;
  last_names_ = names;
  names_epoch_ = cluster_.epoch();
  ++names_generation_;
  last_ids_.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const auto id = cluster_.find(names[i]);
    last_ids_[i] = id && !cluster_.node(*id).devices.empty() ? static_cast<int64_t>(*id) : -1;
  }
  return last_ids_;
}

void DecisionState::observe_pod(const std::string& key, std::string_view phase, bool bound,
                                const core::codec::PodDocument* seen, bool deleted) {
  if (auto it = held_.find(key); it != held_.end()) {
    const bool gone = deleted || phase == "Succeeded" || phase == "Failed";
    if (it->second.kind != Kind::Observed && !gone && !(it->second.kind == Kind::Bound && bound))
      return;  // our reservation is newer than what the API shows
    drop(key);
  }
  if (deleted || !seen) return;
  const core::codec::PodDocument& doc = *seen;
  std::vector<std::string> warnings;
  try {
    const std::string source = "pod " + doc.request.ns + "/" + doc.request.name;
    if (auto h = core::holding_of(cluster_, doc, source, warnings)) {
      Held held{*h,
                Kind::Observed,
                {},
                PodRef{doc.request.ns, doc.request.name, doc.request.uid},
                doc.request,
                0,
                doc.priority,                   // what preemption reads of it
                rfc3339_seconds(doc.started)};  // (nullopt: not started)
      charge(held_.emplace(key, std::move(held)).first->second);
    }
  } catch (const core::InputError& e) {
    std::cerr << "gpuslice serve: pod not counted: " << e.what() << "\n";
  }
}

void DecisionState::remember_pod(PodSeen&& pod) {
  if (pod.doc)
    pods_.insert_or_assign(pod.key, std::move(*pod.doc));
  else
    pods_.erase(pod.key);
}

void DecisionState::replace_all(std::vector<core::codec::NodeObject> nodes,
                                std::vector<core::codec::PodObject> pods) {
  // Read outside the lock: a filter waits only for the swap.
  std::vector<std::pair<std::string, const core::codec::NodeObject*>> named;
  named.reserve(nodes.size());
  for (const auto& n : nodes)
    if (const std::string name = text_of(n.header.meta.name); !name.empty()) named.emplace_back(name, &n);
  std::vector<PodSeen> seen;
  seen.reserve(pods.size());
  for (const auto& p : pods) seen.push_back(read_pod(p));
  pods.clear();
  pods.shrink_to_fit();
  {
    std::lock_guard lock(mutex_);
    // A relist (the watch expired) shows mostly the same registrations: keep
    // those already read, so it does not re-read 10,000 nodes.
    auto before = std::move(nodes_);
    nodes_.clear();
    node_order_.clear();
    pods_.clear();
    nominated_.clear();
    node_locks_.clear();
    for (const auto& [name, object] : named) {
      const auto was = before.find(name);
      auto [it, fresh] = nodes_.try_emplace(name);
      if (fresh) node_order_.push_back(name);
      it->second = read_node(*object, was == before.end() ? nullptr : &was->second);
      note_lock(*object, false);
    }
    for (auto& p : seen) {
      note_nomination(p, false);
      remember_pod(std::move(p));
    }
    rebuild();
    ready_ = true;
  }
  nodes.clear();
  nodes.shrink_to_fit();
  malloc_trim(0);  // the objects read are gone: give their memory back
}

void DecisionState::node_changed(WatchKind kind, core::codec::NodeObject object) {
  std::lock_guard lock(mutex_);
  const std::string name = text_of(object.header.meta.name);
  if (name.empty()) return;
  note_lock(object, kind == WatchKind::Deleted);
  auto it = nodes_.find(name);
  if (kind == WatchKind::Deleted) {
    if (it == nodes_.end()) return;
    nodes_.erase(it);
    std::erase(node_order_, name);
  } else {
    if (it == nodes_.end()) {
      node_order_.push_back(name);
      it = nodes_.try_emplace(name).first;
    } else if (it->second.fingerprint == node_fingerprint(object)) {
      return;  // its registration did not change
    }
    it->second = read_node(object, nullptr);
  }
  rebuild();
}

void DecisionState::pod_changed(WatchKind kind, core::codec::PodObject object) {
  PodSeen seen = read_pod(object);
  std::lock_guard lock(mutex_);
  const bool deleted = kind == WatchKind::Deleted;
  observe_pod(seen.key, seen.phase, seen.bound, seen.doc ? &*seen.doc : nullptr, deleted);
  note_nomination(seen, deleted);
  if (deleted)
    pods_.erase(seen.key);
  else
    remember_pod(std::move(seen));
}

namespace {

template <class T>
std::vector<T> decode_all(const std::vector<nlohmann::json>& objects, const char* kind) {
  std::vector<T> out;
  for (const auto& o : objects) {
    try {
      if (auto decoded = decode_api_json(o, kind, std::string("a ") + kind + " given as JSON"))
        if (auto* typed = std::get_if<T>(&*decoded)) out.push_back(std::move(*typed));
    } catch (const core::InputError& e) {
      std::cerr << "gpuslice serve: " << kind << " not read: " << e.what() << "\n";
    }
  }
  return out;
}

}  // namespace

void DecisionState::replace_all(const std::vector<nlohmann::json>& nodes,
                                const std::vector<nlohmann::json>& pods) {
  replace_all(decode_all<core::codec::NodeObject>(nodes, "Node"),
              decode_all<core::codec::PodObject>(pods, "Pod"));
}

void DecisionState::node_changed(WatchKind kind, const nlohmann::json& object) {
  for (auto& n : decode_all<core::codec::NodeObject>({object}, "Node")) node_changed(kind, std::move(n));
}

void DecisionState::pod_changed(WatchKind kind, const nlohmann::json& object) {
  for (auto& p : decode_all<core::codec::PodObject>({object}, "Pod")) pod_changed(kind, std::move(p));
}

bool DecisionState::ready() const {
  std::lock_guard lock(mutex_);
  return ready_;
}

// One filter, step by step: read the pod; a pod asking for no device passes
// every node; otherwise, under the lock, look the named nodes up, answer a
// refusal seen before from the memo or decide afresh, and reserve what was
// placed; then, outside the lock, write HAMi's annotations and events.

// The pod as sent, through the one reader (whatever "kind" it says or omits,
// it is the pod). Throws what the reader throws.
DecisionState::FilterPod DecisionState::read_filter_pod(const ExtenderArgs& args) const {
  const std::string source = "ExtenderArgs.Pod";
  core::codec::ReadOptions read;
  read.default_kind = "Pod";
  read.count_lines = false;
  std::optional<core::codec::PodObject> object;
  auto take = [&](core::codec::KubeObject&& o, const core::codec::ReadContext&) {
    if (auto* p = std::get_if<core::codec::PodObject>(&o)) object = std::move(*p);
  };
  core::codec::read_kube_objects(
      core::codec::KubeText::from_string(args.pod_json.empty() ? args.pod.dump() : args.pod_json, source),
      take, read);
  if (!object) throw core::InputError(source, 0, "kind", "is not a Pod");
  const auto& meta = object->header.meta;
  FilterPod pod;
  pod.ref = PodRef{text_of(meta.namespace_name), text_of(meta.name), text_of(meta.uid)};
  core::codec::PodDocument doc =
      core::codec::pod_document(*object, ApiContext(source), options_.defaults, &pod.warnings);
  pod.request = std::move(doc.request);
  pod.priority = doc.priority;
  if (pod.ref.namespace_name.empty()) pod.ref.namespace_name = "default";
  pod.key = key_of(pod.ref.uid, pod.ref.namespace_name, pod.ref.name);
  return pod;
}

// The scheduler retries a pending pod's filter: its warnings are said the
// first time only.
void DecisionState::warn_once(const FilterPod& pod) {
  if (pod.warnings.empty()) return;
  std::lock_guard lock(warned_mutex_);
  // A bound on a long-lived server's memory: past it, a pod may be named again.
  constexpr size_t kMaxWarnedPods = 10'000;
  if (warned_pods_.size() >= kMaxWarnedPods) warned_pods_.clear();
  if (!warned_pods_.insert(pod.key).second) return;
  for (const std::string& w : pod.warnings) std::cerr << "gpuslice serve: warning: " << w << "\n";
}

void DecisionState::record_filter_event(const PodRef& ref, const std::string& type, const std::string& reason,
                                        const std::string& message) {
  try {
    writer_.record_event(ref, type, reason, message);
  } catch (const std::exception& e) {
    std::cerr << "gpuslice serve: event for " << ref.namespace_name << "/" << ref.name
              << " not recorded: " << e.what() << "\n";
  }
}

// Each node once (a repeated name counts once), as HAMi's map of nodes does.
DecisionState::Candidates DecisionState::candidates_of(const std::vector<std::string>& names) {
  const std::vector<int64_t>& ids = node_ids(names);
  Candidates named;
  named.ids.reserve(ids.size());
  if (named_.size() != cluster_.size()) named_.assign(cluster_.size(), 0);
  ++named_stamp_;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) {
      named.unregistered.insert(names[i]);
    } else if (const auto id = static_cast<size_t>(ids[i]); named_[id] != named_stamp_) {
      named_[id] = named_stamp_;
      named.ids.push_back(id);
    }
  }
  return named;
}

// A pod of a shape refused before, on the same names: the kept answer while
// every named node changed since refuses it alike. False when none holds.
bool DecisionState::answer_from_memo(const core::PodRequest& pod, Choice& choice,
                                     ExtenderFilterResult& result) {
  auto refit = [&](size_t id) -> std::optional<core::Refusal> {
    const core::Decision one =
        scheduler_.place_among(cluster_, std::vector<size_t>{id}, 1, pod, *policy_, core::Detail::Full);
    if (one.placed()) return std::nullopt;
    return one.failed.front().second;
  };
  const RefusalMemo::Answer* kept = refusals_->find(cluster_, names_generation_, pod, refit);
  if (!kept) return false;
  result.failed = kept->failed;
  choice.decision.events = kept->events;
  ++refusals_reused_;
  return true;
}

// The placed pod's cards held until its bind (or the reservation's expiry),
// and HAMi's texts for them.
void DecisionState::reserve(const FilterPod& pod, size_t asked, Choice& choice) {
  const core::Decision& decision = choice.decision;
  const core::Node& node = cluster_.node(*decision.node);
  choice.node_name = node.name;
  choice.allocation = core::codec::encode_allocation(decision.allocation, node);
  choice.mig_allocations = core::codec::encode_mig_allocations(decision.allocation, node);
  choice.generation = ++generation_;
  Held held{core::Holding{*decision.node, decision.allocation, pod.request.host},
            Kind::Reserved,
            now() + options_.reservation_ttl,
            pod.ref,
            pod.request,
            choice.generation,
            std::nullopt,  // preemption reads a bound pod's priority from the feed
            std::nullopt};
  auto& placed = held_.emplace(pod.key, std::move(held)).first->second;
  charge(placed);
  schedule_expiry(pod.key, placed);
  if (choice.decision.events.empty())  // the fast path: HAMi's text without the per-node list
    choice.decision.events.push_back(
        {"Normal", "FilteringSucceed",
         fmt::format("find fit node({}) among {} nodes, best first by the node policy (every fitting "
                     "node's score is listed only for filters naming at most {} nodes)",
                     choice.node_name, asked, options_.full_report_nodes)});
}

// Every named node's reason, by name. Nodes in one state were refused alike:
// each distinct reason is formatted once (refusals compare as values, their
// text does not).
void DecisionState::write_refusal(const Candidates& named, core::Decision& decision,
                                  ExtenderFilterResult& result) {
  const uint32_t unregistered_reason =
      named.unregistered.empty() ? 0 : result.failed.add_reason("node unregistered");
  std::optional<uint32_t> template_reason;
  for (const auto name : named.unregistered) {
    // Cluster Autoscaler's simulated node named without its object: nothing
    // to read its cards from (CA sends the objects with nodeCacheCapable: false).
    if (name.starts_with("template-node-for-")) {
      if (!template_reason)
        template_reason = result.failed.add_reason(
            "node unregistered: a simulated node named without its Node object cannot be fitted (configure "
            "Cluster Autoscaler's extender with nodeCacheCapable: false so that it sends the objects)");
      result.failed.add(name, *template_reason);
    } else {
      result.failed.add(name, unregistered_reason);
    }
  }
  std::unordered_map<uint64_t, std::pair<const core::Refusal*, uint32_t>> formatted;
  // By name, as the answer is written: the encoder then need not sort.
  const std::vector<uint32_t> by_name =
      decision.failed_name_order.size() == decision.failed.size()
          ? std::move(decision.failed_name_order)
          : core::failed_by_name(cluster_, decision, scheduler_.name_ranks(cluster_));
  // Room for every name at once (an estimate: the text grows as it must).
  result.failed.reserve(by_name.size(), by_name.size() * 24);
  const core::Refusal* previous = nullptr;
  uint32_t previous_reason = 0;
  for (const uint32_t i : by_name) {
    const auto& [id, refusal] = decision.failed[i];
    // Neighbours by name are mostly in one state: compare before hashing.
    if (!previous || !(*previous == refusal)) {
      const uint64_t h = refusal.hash();
      if (auto it = formatted.find(h); it != formatted.end() && *it->second.first == refusal) {
        previous_reason = it->second.second;
      } else {
        previous_reason = result.failed.add_reason(refusal.format());
        formatted.try_emplace(h, &refusal, previous_reason);
      }
      previous = &refusal;
    }
    result.failed.add(cluster_.node(id).name, previous_reason);
  }
}

// The decision itself, under the lock: a pod filtered again holds nothing
// yet (HAMi's delPod); a refusal kept in the memo is answered from it;
// otherwise the core decides among the named nodes, and a placement is
// reserved or a refusal written (and kept).
DecisionState::Choice DecisionState::decide(const FilterPod& pod, const std::vector<std::string>& names,
                                            ExtenderFilterResult& result) {
  Choice choice;
  expire();
  drop(pod.key);
  Candidates named = candidates_of(names);
  const size_t asked = named.asked();
  // Nominated pods' room, held for this decision only: a refusal then
  // depends on more than the nodes, so it is neither answered from nor kept
  // in the memo.
  const NominationHold hold = hold_nominations(pod, named);
  // A kept refusal holds while the nodes do; a quota moves without them.
  const bool quota_limited = quota_may_refuse(pod.request);
  const bool use_memo = options_.reuse_refusals && !quota_limited && !hold.any();
  if (use_memo && answer_from_memo(pod.request, choice, result)) return choice;
  const core::Detail detail =
      named.ids.size() <= options_.full_report_nodes ? core::Detail::Full : core::Detail::Minimal;
  choice.decision = scheduler_.place_among(cluster_, named.ids, asked, pod.request, *policy_, detail);
  if (choice.decision.placed()) {
    reserve(pod, asked, choice);
  } else {
    write_refusal(named, choice.decision, result);
    if (use_memo)
      refusals_->keep(cluster_, names_generation_, pod.request, choice.decision,
                      {result.failed, choice.decision.events});
  }
  release_nominations(hold, result);
  return choice;
}

// Written as HAMi writes it, so its device plugin and HAMi-core enforce it;
// a patch that fails returns the reservation. False (and the error in
// `result`) when it failed.
bool DecisionState::write_placement(const FilterPod& pod, const Choice& choice,
                                    ExtenderFilterResult& result) {
  nlohmann::json annotations = {{core::codec::kAssignedNodeAnnotation, choice.node_name},
                                {kAssignedTimeAnnotation, std::to_string(unix_seconds(now()))},
                                {core::codec::kToAllocateAnnotation, choice.allocation},
                                {core::codec::kAllocatedAnnotation, choice.allocation}};
  // HAMi v2.10 PatchAnnotations: a MIG grant's reservation beside it.
  if (!choice.mig_allocations.empty())
    annotations[std::string(core::codec::kMigAllocationsAnnotation)] = choice.mig_allocations;
  try {
    writer_.patch_pod_annotations(pod.ref, annotations);
    return true;
  } catch (const std::exception& e) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = held_.find(pod.key); it != held_.end() && it->second.generation == choice.generation)
        drop(pod.key);
    }
    result.error = fmt::format("patching pod annotations failed: {}", e.what());
    return false;
  }
}

ExtenderFilterResult DecisionState::filter(const ExtenderArgs& args, FilterOutcome* outcome_out) {
  FilterOutcome outcome_local;
  FilterOutcome& outcome = outcome_out ? *outcome_out : outcome_local;
  ExtenderFilterResult result;
  FilterPod pod;
  try {
    pod = read_filter_pod(args);
  } catch (const std::exception& e) {
    outcome = FilterOutcome::Error;
    result.error = e.what();
    return result;
  }
  warn_once(pod);
  const bool dry_run = holds_unknown_node(args);
  // HAMi's answer for a pod that asks for no device: every node passes (a
  // dry run writes no event).
  if (!pod.request.wants_devices()) {
    outcome = dry_run ? FilterOutcome::DryRun : FilterOutcome::PassThrough;
    result.nodes = args.node_names;
    if (!dry_run) record_filter_event(pod.ref, "Warning", "FilteringFailed", "does not request any resource");
    return result;
  }
  if (dry_run) return dry_run_filter(pod, args, outcome);
  Choice choice;
  {
    std::lock_guard lock(mutex_);
    if (!ready_) {
      outcome = FilterOutcome::Error;
      result.error = "the extender has not read the cluster yet";
      return result;
    }
    choice = decide(pod, args.node_names, result);
  }
  if (!choice.decision.placed()) {
    outcome = FilterOutcome::Unschedulable;
    for (const auto& e : choice.decision.events) record_filter_event(pod.ref, e.type, e.reason, e.message);
    return result;
  }
  if (!write_placement(pod, choice, result)) {
    outcome = FilterOutcome::Error;
    record_filter_event(pod.ref, "Warning", "FilteringFailed", result.error);
    return result;
  }
  for (const auto& e : choice.decision.events) record_filter_event(pod.ref, e.type, e.reason, e.message);
  outcome = FilterOutcome::Placed;
  result.failed.clear();  // HAMi answers only the chosen node
  result.nodes = std::vector<std::string>{choice.node_name};
  return result;
}

std::string DecisionState::bind(const ExtenderBindingArgs& args) {
  PodRef ref{args.pod_namespace, args.pod_name, args.pod_uid};
  auto record = [&](const std::string& type, const std::string& reason, const std::string& message) {
    try {
      writer_.record_event(ref, type, reason, message);
    } catch (const std::exception& e) {
      std::cerr << "gpuslice serve: event not recorded: " << e.what() << "\n";
    }
  };
  std::string key;
  uint64_t generation = 0;
  std::string lock_value;
  {
    std::unique_lock lock(mutex_);
    expire();
    key = key_of(args.pod_uid, args.pod_namespace, args.pod_name);
    auto it = held_.find(key);
    if (it == held_.end() && !args.pod_uid.empty())
      it = held_.find(key_of("", args.pod_namespace, args.pod_name));
    if (it == held_.end() && args.pod_uid.empty())
      for (auto i = held_.begin(); i != held_.end(); ++i)
        if (i->second.kind != Kind::Observed && i->second.ref.namespace_name == args.pod_namespace &&
            i->second.ref.name == args.pod_name)
          it = i;
    std::string error;
    if (it == held_.end() || it->second.kind == Kind::Observed)
      error = fmt::format("no reservation for pod {}/{}: filter it first (a reservation lasts {} ms)",
                          args.pod_namespace, args.pod_name, options_.reservation_ttl.count());
    else if (it->second.kind != Kind::Reserved)
      error = fmt::format("pod {}/{} is already bound or being bound", args.pod_namespace, args.pod_name);
    else if (const std::string& on = cluster_.node(it->second.holding.node).name; on != args.node)
      error = fmt::format("pod {}/{} is reserved on node {}, not {}", args.pod_namespace, args.pod_name, on,
                          args.node);
    if (error.empty()) {
      // HAMi's LockNode: a lock younger than the timeout held by another pod refuses.
      if (auto l = node_locks_.find(args.node); l != node_locks_.end()) {
        const bool mine = l->second.ns == args.pod_namespace && l->second.name == args.pod_name;
        if (!mine && now() - l->second.at < options_.node_lock_timeout)
          error = fmt::format("node {} has been locked within {}", args.node,
                              format_timeout(options_.node_lock_timeout));
      }
    }
    if (!error.empty()) {
      if (it != held_.end() && it->second.kind == Kind::Reserved) drop(std::string(it->first));
      lock.unlock();
      record("Warning", "BindingFailed", error);
      return error;
    }
    key = it->first;
    it->second.kind = Kind::Binding;
    generation = it->second.generation;
    const auto t = now();
    node_locks_[args.node] = NodeLock{t, args.pod_namespace, args.pod_name};
    lock_value = fmt::format("{},{},{}", rfc3339(t), args.pod_namespace, args.pod_name);
  }
  try {
    writer_.patch_node_annotations(args.node, {{kNodeLockAnnotation, lock_value}});
    writer_.patch_pod_annotations(ref, {{kBindPhaseAnnotation, "allocating"},
                                        {kBindTimeAnnotation, std::to_string(unix_seconds(now()))}});
    writer_.bind(ref, args.node);
  } catch (const std::exception& e) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = held_.find(key); it != held_.end() && it->second.generation == generation) drop(key);
      node_locks_.erase(args.node);
    }
    try {
      writer_.patch_node_annotations(args.node, {{kNodeLockAnnotation, nullptr}});
    } catch (const std::exception&) {
      // The lock times out on its own (HAMi's NodeLockTimeout).
    }
    const std::string error = fmt::format("binding pod {}/{} to node {} failed: {}", args.pod_namespace,
                                          args.pod_name, args.node, e.what());
    record("Warning", "BindingFailed", error);
    return error;
  }
  bool unlock = false;
  {
    std::lock_guard lock(mutex_);
    if (auto it = held_.find(key); it != held_.end() && it->second.generation == generation)
      it->second.kind = Kind::Bound;
    if (options_.release_lock_after_bind) {
      node_locks_.erase(args.node);
      unlock = true;
    }
  }
  if (unlock) {
    try {
      writer_.patch_node_annotations(args.node, {{kNodeLockAnnotation, nullptr}});
    } catch (const std::exception&) {
    }
  }
  record(
      "Normal", "BindingSucceed",
      fmt::format("Successfully binding node [{}] to {}/{}", args.node, args.pod_namespace, args.pod_name));
  return {};
}

std::vector<CardUse> DecisionState::card_use() {
  std::lock_guard lock(mutex_);
  expire();
  std::vector<CardUse> out;
  out.reserve(cluster_.device_count());
  for (size_t id = 0; id < cluster_.size(); ++id) {
    const auto view = cluster_.view(id);
    for (size_t i = 0; i < view.device_count(); ++i) {
      const auto& d = view.device(i);
      out.push_back({view.node->name, d.uuid, d.type, d.index, d.memory_mib, view.usage[i].memory_mib,
                     d.cores, view.usage[i].cores, view.usage[i].slots});
    }
  }
  return out;
}

size_t DecisionState::reservation_count() {
  std::lock_guard lock(mutex_);
  expire();
  size_t n = 0;
  for (const auto& [k, h] : held_) n += h.kind == Kind::Reserved || h.kind == Kind::Binding;
  return n;
}

uint64_t DecisionState::expired_count() const {
  std::lock_guard lock(mutex_);
  return expired_;
}

bool DecisionState::quota_may_refuse(const core::PodRequest& pod) {
  if (!scheduler_.quotas()) return false;
  const auto headroom = quotas_.headroom(pod.ns);
  if (!headroom) return false;
  if (largest_card_epoch_ != cluster_.epoch()) {
    largest_card_mib_ = core::largest_card_mib(cluster_);
    largest_card_epoch_ = cluster_.epoch();
  }
  return !headroom->admits(core::most_quota_use(pod, largest_card_mib_));
}

std::vector<core::QuotaBook::Entry> DecisionState::quota_entries() {
  std::lock_guard lock(mutex_);
  expire();
  return quotas_.entries();
}

core::QuotaUse DecisionState::quota_used(const std::string& ns) {
  std::lock_guard lock(mutex_);
  expire();
  return quotas_.used(ns);
}

bool DecisionState::quota_admits(const std::string& ns, const core::QuotaUse& request) {
  std::lock_guard lock(mutex_);
  expire();
  const auto headroom = quotas_.headroom(ns);
  return !headroom || headroom->admits(request);
}

void DecisionState::quotas_replaced(std::vector<core::NamespaceQuota> quotas) {
  std::lock_guard lock(mutex_);
  // A fresh book: the listed limits, then every held pod's usage again.
  quotas_ = core::QuotaBook{};
  quota_objects_.clear();
  for (auto& q : quotas) {
    quotas_.add(q);
    const std::string key = q.ns + "/" + q.name;
    quota_objects_.insert_or_assign(key, std::move(q));
  }
  for (const auto& [key, h] : held_) quotas_.charge(h.request.ns, core::quota_use(h.holding.allocation));
}

void DecisionState::quota_changed(WatchKind kind, core::NamespaceQuota quota) {
  std::lock_guard lock(mutex_);
  const std::string key = quota.ns + "/" + quota.name;
  auto it = quota_objects_.find(key);
  if (kind == WatchKind::Deleted) {
    // HAMi's DelQuota: the keys the object set are unlimited again.
    quotas_.remove_quota(quota.ns, it != quota_objects_.end() ? it->second.limits : quota.limits);
    if (it != quota_objects_.end()) quota_objects_.erase(it);
    return;
  }
  if (it != quota_objects_.end()) {
    quotas_.update_quota(quota.ns, it->second.limits, quota.limits);  // UpdateQuota
    it->second = std::move(quota);
  } else {
    quotas_.add(quota);
    quota_objects_.emplace(key, std::move(quota));
  }
}

uint64_t DecisionState::refusals_reused_count() const {
  std::lock_guard lock(mutex_);
  return refusals_reused_;
}

}  // namespace gpuslice::serve
