// DecisionState::preempt: the extender's preempt verb on the core's
// preemption (kube-scheduler's victim choice with HAMi's fit).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/preemption.hpp"
#include "gpuslice/serve/decision_state.hpp"
#include "rfc3339.hpp"

namespace gpuslice::serve {

namespace {

class PreemptorContext final : public core::codec::ReadContext {
 public:
  const std::string& source() const override { return source_; }
  int line_of(core::codec::Position) const override { return 0; }
  std::string_view raw_object() const override { return {}; }

 private:
  std::string source_ = "ExtenderPreemptionArgs.Pod";
};

}  // namespace

ExtenderPreemptionResult DecisionState::preempt(const ExtenderPreemptionArgs& args) {
  core::codec::PodDocument pod;
  try {
    core::codec::ReadOptions read;
    read.default_kind = "Pod";
    read.count_lines = false;
    std::optional<core::codec::PodObject> object;
    core::codec::read_kube_objects(
        core::codec::KubeText::from_string(args.pod_json, "ExtenderPreemptionArgs.Pod"),
        [&](core::codec::KubeObject&& o, const core::codec::ReadContext&) {
          if (auto* p = std::get_if<core::codec::PodObject>(&o)) object = std::move(*p);
        },
        read);
    if (!object) throw ProtocolError("ExtenderPreemptionArgs: Pod is not a Pod");
    pod = core::codec::pod_document(*object, PreemptorContext(), options_.defaults);
  } catch (const ProtocolError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProtocolError(fmt::format("ExtenderPreemptionArgs: {}", e.what()));
  }
  ExtenderPreemptionResult result;
  if (pod.preempt_never) return result;  // PodEligibleToPreemptOthers: Never preempts nobody

  core::PreemptionQuestion question;
  question.pod = std::move(pod.request);
  question.priority = pod.priority;
  const double now_s = std::chrono::duration<double>(now().time_since_epoch()).count();

  std::lock_guard lock(mutex_);
  if (!ready_) throw std::runtime_error("the extender has not read the cluster yet");
  expire();
  // The offered nodes we know, each once, in the order sent.
  std::vector<int32_t> offered_at(cluster_.size(), -1);
  std::vector<const NodeVictimsOffer*> offers;
  std::vector<size_t> nodes;
  for (const NodeVictimsOffer& offer : args.nodes) {
    const auto id = cluster_.find(offer.node);
    if (!id || offered_at[*id] >= 0) continue;  // not registered (no cards to free) or named twice
    offered_at[*id] = static_cast<int32_t>(nodes.size());
    nodes.push_back(*id);
    offers.push_back(&offer);
  }
  // Candidates: every pod the feed shows on those nodes, not only the ones
  // kube-scheduler offered (it counts slots, or nothing when the GPU
  // resources are ignoredByScheduler, so its victims rarely free the card
  // the pod needs). kube-scheduler finds any pod of the node by UID in its
  // answer. A filter's reservation (not yet bound) may not be on the node
  // in kube-scheduler's cache, and a pod whose bind is in flight holds the
  // node lock its bind releases: both stay charged and are nobody's victim.
  // A pod without a UID cannot be named, one without a readable spec has
  // no known priority: neither is offered.
  std::vector<std::vector<uint32_t>> on_node(nodes.size());
  for (const auto& [key, held] : held_) {
    const int32_t at = offered_at[held.holding.node];
    if (at < 0 || held.kind == Kind::Reserved || held.kind == Kind::Binding || key.rfind("uid:", 0) != 0)
      continue;
    // Observed pods keep what preemption reads; a bound one of ours reads
    // it from the feed's pod.
    std::optional<int32_t> priority = held.priority;
    std::optional<double> started = held.started;
    if (!priority) {
      const auto doc = pods_.find(key);
      if (doc == pods_.end()) continue;
      priority = doc->second.priority;
      started = rfc3339_seconds(doc->second.started);
    }
    if (*priority >= question.priority) continue;
    const double start = started.value_or(now_s);  // not started: now, as GetPodStartTime
    on_node[static_cast<size_t>(at)].push_back(static_cast<uint32_t>(question.running.size()));
    question.running.push_back(core::RunningPod{key.substr(4),
                                                held.holding.node,
                                                *priority,
                                                start,
                                                held.holding.allocation,
                                                held.holding.host,
                                                {},
                                                {}});
  }
  core::VictimSelector selector(cluster_, *policy_);
  for (size_t i = 0; i < nodes.size(); ++i) {
    // Equal importance keeps the order of the UIDs: answers repeat.
    std::sort(on_node[i].begin(), on_node[i].end(),
              [&](uint32_t a, uint32_t b) { return question.running[a].id < question.running[b].id; });
    const core::NodeVerdict verdict = selector.select(question, nodes[i], on_node[i]);
    if (verdict.outcome != core::NodeOutcome::Victims) continue;
    MetaVictimsAnswer answer;
    answer.node = offers[i]->node;
    for (const uint32_t v : verdict.victims.victims) answer.uids.push_back(question.running[v].id);
    // serve does not watch PodDisruptionBudgets: it passes on
    // kube-scheduler's count for the node, at most one per victim.
    answer.pdb_violations =
        std::min<int64_t>(offers[i]->pdb_violations, static_cast<int64_t>(answer.uids.size()));
    result.nodes.push_back(std::move(answer));
  }
  return result;
}

}  // namespace gpuslice::serve
