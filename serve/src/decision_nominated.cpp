// kube-scheduler's nominated pods (docs/serve.md#nominated-pods). After it
// preempts, kube-scheduler sets the preemptor's status.nominatedNodeName
// and, while the victims terminate, filters every pod of no higher
// priority with the nominated pods added to their nodes
// (RunFilterPluginsWithNominatedPods / addGENominatedPods: priority >= the
// pod's, not the pod itself), so that nobody takes the room it made. An
// extender is not told of nominations, so serve, which watches pods, holds
// that room on the cards itself.
#include <fmt/format.h>

#include <algorithm>

#include "filter_steps.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/serve/decision_state.hpp"

namespace gpuslice::serve {

// A nomination lasts while the pod is pending with the field set: it ends
// when the pod binds (spec.nodeName), ends, is deleted, or the field clears.
void DecisionState::note_nomination(const PodSeen& pod, bool deleted) {
  const bool ended = pod.phase == "Succeeded" || pod.phase == "Failed";
  if (deleted || ended || pod.bound || !pod.doc || pod.doc->nominated_node.empty()) {
    nominated_.erase(pod.key);
    return;
  }
  nominated_.insert_or_assign(pod.key,
                              Nomination{pod.doc->nominated_node, pod.doc->priority, pod.doc->request});
}

DecisionState::NominationHold DecisionState::hold_nominations(const FilterPod& pod, Candidates& named) {
  NominationHold hold;
  if (nominated_.empty()) return hold;
  // The nominated pods that count for this pod on the nodes it names, most
  // important first (then by key: one order whatever the feed's).
  std::vector<std::pair<const std::string*, const Nomination*>> counted;
  for (const auto& [key, n] : nominated_) {
    if (n.priority < pod.priority || key == pod.key) continue;
    // Serve placed it already (a reservation, or bound as the feed shows):
    // its cards are charged as it holds them.
    if (held_.count(key)) continue;
    counted.emplace_back(&key, &n);
  }
  if (counted.empty()) return hold;
  std::stable_sort(counted.begin(), counted.end(),
                   [](const auto& a, const auto& b) { return a.second->priority > b.second->priority; });
  std::vector<size_t> refused;
  for (const auto& [key, n] : counted) {
    (void)key;
    const auto id = cluster_.find(n->node);
    if (!id || named_.size() <= *id || named_[*id] != named_stamp_) continue;  // not named this time
    if (std::find(refused.begin(), refused.end(), *id) != refused.end()) continue;
    // Where HAMi would put it now on its node; where it does not fit yet
    // (the victims still hold their cards), the node is kept for it whole,
    // as kube-scheduler's summed requests then exceed the node.
    const core::Decision d = scheduler_.place_among(cluster_, std::vector<size_t>{*id}, 1, n->request,
                                                    *policy_, core::Detail::Minimal);
    if (!d.placed()) {
      refused.push_back(*id);
      hold.refused.emplace_back(*id, n->request.ns + "/" + n->request.name);
      continue;
    }
    core::Holding h{*id, d.allocation, n->request.host};
    cluster_.charge(h.node, h.allocation, h.host);
    core::reserved(*policy_, cluster_.view(h.node), n->request, h.allocation);
    hold.charged.emplace_back(std::move(h), &n->request);
  }
  if (!refused.empty())
    std::erase_if(named.ids,
                  [&](size_t id) { return std::find(refused.begin(), refused.end(), id) != refused.end(); });
  return hold;
}

void DecisionState::release_nominations(const NominationHold& hold, ExtenderFilterResult& result) {
  for (auto it = hold.charged.rbegin(); it != hold.charged.rend(); ++it) {
    const core::Holding& h = it->first;
    cluster_.release(h.node, h.allocation, h.host);
    core::unreserved(*policy_, cluster_.view(h.node), *it->second, h.allocation);
  }
  for (const auto& [id, name] : hold.refused)
    result.failed[cluster_.node(id).name] =
        fmt::format("node is held for the nominated pod {} while its victims terminate", name);
}

}  // namespace gpuslice::serve
