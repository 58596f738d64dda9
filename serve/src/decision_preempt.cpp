// DecisionState::preempt: the extender's preempt verb on the core's
// preemption (kube-scheduler's victim choice with HAMi's fit).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/preemption.hpp"
#include "gpuslice/serve/decision_state.hpp"

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

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// status.startTime as the API writes it (RFC 3339: "2026-11-28T06:15:52Z",
// maybe fractions or an offset) in seconds since 1970; nullopt otherwise.
std::optional<double> rfc3339_seconds(std::string_view t) {
  auto number = [&](size_t at, size_t len, int& out) {
    if (at + len > t.size()) return false;
    const auto [end, ec] = std::from_chars(t.data() + at, t.data() + at + len, out);
    return ec == std::errc() && end == t.data() + at + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !number(0, 4, y) || t[4] != '-' || !number(5, 2, mo) || t[7] != '-' ||
      !number(8, 2, d) || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !number(11, 2, h) ||
      t[13] != ':' || !number(14, 2, mi) || t[16] != ':' || !number(17, 2, s))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  double seconds =
      static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
      h * 3600.0 + mi * 60.0 + s;
  size_t at = 19;
  if (at < t.size() && t[at] == '.') {
    double scale = 0.1;
    for (++at; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, scale /= 10)
      seconds += (t[at] - '0') * scale;
  }
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z') && at + 1 == t.size()) return seconds;
  int oh = 0, om = 0;
  if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && number(at + 1, 2, oh) && t[at + 3] == ':' &&
      number(at + 4, 2, om))
    return seconds - (t[at] == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
  return std::nullopt;
}

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
    const auto doc = pods_.find(key);
    if (doc == pods_.end() || doc->second.priority >= question.priority) continue;
    const double start =
        rfc3339_seconds(doc->second.started).value_or(now_s);  // unset: now, as GetPodStartTime
    on_node[static_cast<size_t>(at)].push_back(static_cast<uint32_t>(question.running.size()));
    question.running.push_back(core::RunningPod{key.substr(4),
                                                held.holding.node,
                                                doc->second.priority,
                                                start,
                                                held.holding.allocation,
                                                held.holding.host,
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
