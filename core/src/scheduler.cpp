#include "gpuslice/core/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpuslice/core/place.hpp"
#include "scheduler_caches.hpp"

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

// What a share takes on `card` (HAMi Fit's grant for one card).
DeviceGrant share_grant(const NodeView& view, const ContainerRequest& share, int card) {
  return DeviceGrant{card, share.memory_on(view.device(static_cast<size_t>(card)).memory_mib),
                     std::min<int32_t>(share.cores, 100)};
}

// Removes `id` from a Random shape cache's members (swap with the last).
template <typename Cache>
void drop_member(Cache& c, size_t id) {
  const uint32_t at = c.member_at[id];
  const uint32_t last = c.members.back();
  c.members[at] = last;
  c.member_at[last] = at;
  c.members.pop_back();
  c.member_at[id] = UINT32_MAX;
}

// Cheap necessary condition for fit_pod: enough cards that could each take
// the container alone. Lets the ranked path skip full nodes in a few
// integer compares; fit_pod still decides.
bool may_fit(const NodeView& node, const PodRequest& pod) {
  if (host_shortfall(node, pod).any()) return false;
  for (size_t c = 0; c < pod.container_count(); ++c) {
    const auto& req = pod.container_at(c);
    if (!req.wants_devices()) continue;
    const int32_t cores = std::min<int32_t>(req.cores, 100);
    int candidates = 0;
    for (size_t i = 0; i < node.device_count() && candidates < req.count; ++i) {
      const auto& d = node.device(i);
      const auto& u = node.usage[i];
      // Integers first: the vendor string compare is the slow part.
      if (d.healthy && u.slots < d.slots && d.memory_mib - u.memory_mib >= req.memory_on(d.memory_mib) &&
          d.cores - u.cores >= cores && !(cores == 100 && d.cores == 100 && u.slots > 0) &&
          d.vendor == req.vendor)
        ++candidates;
    }
    if (candidates < req.count) return false;
  }
  return true;
}

// may_fit for the policy's own fit, when it brings one (`device_fit`,
// asked of the policy once per placement, not once per node).
bool may_fit(DeviceFit* device_fit, const NodeView& node, const PodRequest& pod) {
  return device_fit ? device_fit->may_fit(node, pod) : may_fit(node, pod);
}

// Two cards of one node that no score can tell apart: built alike, used alike.
bool same_card(const NodeView& view, int a, int b) {
  const auto& da = view.device(static_cast<size_t>(a));
  const auto& db = view.device(static_cast<size_t>(b));
  return view.usage[static_cast<size_t>(a)] == view.usage[static_cast<size_t>(b)] && da.type == db.type &&
         da.slots == db.slots && da.memory_mib == db.memory_mib && da.cores == db.cores &&
         da.numa == db.numa && da.mode == db.mode;
}

struct Best {
  bool found = false;
  size_t node = 0;
  NodeScore score;
  PodAllocation allocation;
};

}  // namespace

// One placement's scan: the pod, the policy's answers asked once, the flags
// that say what may be skipped, and the best node so far. Four strategies
// share its per-node step (step, evaluate): the nodes given (the
// extender's filter), the lottery (the study's Random), the scores kept per
// request shape, and the full scan; place_impl picks one.
struct Scheduler::Placement {
  Placement(Caches& caches, const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail,
            const std::vector<size_t>* among, const QuotaHeadroom* quota);

  // HAMi's pod-independent scores: the nodes in rank order, the first that
  // fits wins. `allowed`: when given, nodes whose entry differs from the
  // caches' allowed_stamp_ are skipped.
  static Decision by_rank(Caches& c, const QuotaBook* quotas, const Cluster& cluster, const PodRequest& pod,
                          Policy& policy, const KeyRanking& ranking, const std::vector<uint32_t>* allowed);

  // The strategies.
  void scan_given(const std::vector<size_t>& among);
  void draw_lottery(NodeLottery& lottery);
  void best_of_kept_scores();
  void scan_all();
  // The decision from the best node, with the full report's order and events.
  Decision finish(size_t asked);

  // The shared per-node step: skip what cannot change the choice, fit and
  // score the node, keep it if best, or record why not (full report).
  void step(size_t id, bool with_grants);
  // Fit and score one node; for a share the policy's best card. False when
  // the pod does not fit (then `refusal` says why, in the full report).
  bool evaluate(const NodeView& view, NodeScore& score, PodAllocation* allocation, Refusal* refusal);
  bool evaluate_share_cards(const NodeView& view, NodeScore& score, PodAllocation* allocation);
  // A share's cards over the quota are not candidates (a share is the pod's
  // only device container, on one card: its grant is its quota total).
  void drop_cards_over_quota(const NodeView& view);
  void consider(size_t id, const NodeScore& s, const PodAllocation& a);
  bool refused_alike(size_t id);
  void refuse(size_t id, Refusal&& refusal);
  // Among equal ranks the node first in the cluster wins, whatever order
  // the candidates came in (by_rank breaks ties the same way), or the node
  // whose name sorts first for a policy that says so (KAI).
  bool before(size_t a, size_t b) const { return !by_name.empty() ? by_name[a] < by_name[b] : a < b; }
  bool names_cards() const { return !pod.selectors.use_uuids.empty() || !pod.selectors.nouse_uuids.empty(); }

  Caches& c;
  const Cluster& cluster;
  const PodRequest& pod;
  Policy& policy;
  const bool full;
  // HAMi's quota is HAMi's fit's: a dialect's own fit knows none.
  const QuotaHeadroom* const quota;
  const GpuPolicy gpu;
  DeviceFit* const device_fit;
  CardChooser* const chooser;
  size_t share_index = 0;
  const ContainerRequest* share = nullptr;
  // Without the full report, nodes that cannot fit or that repeat an
  // earlier node's state are skipped: neither can change the choice.
  bool skip_repeats = false;
  // The full report: a node in the state of one refused earlier in this
  // scan is refused alike, as fit reads nothing of a node but its state.
  bool share_refusals = false;
  std::span<const uint32_t> by_name;
  Decision decision;
  Best best;
};

Scheduler::Placement::Placement(Caches& caches, const Cluster& cluster_, const PodRequest& pod_,
                                Policy& policy_, Detail detail, const std::vector<size_t>* among,
                                const QuotaHeadroom* quota_)
    : c(caches),
      cluster(cluster_),
      pod(pod_),
      policy(policy_),
      full(detail == Detail::Full),
      quota(quota_),
      gpu(GpuPolicy::parse(policy_.gpu_policy_for(pod_))),
      device_fit(policy_.device_fit()),
      chooser(policy_.card_chooser()) {
  share = chooser ? share_request(pod, share_index) : nullptr;
  // A policy breaking ties by name has its nodes scanned in name order
  // (scan_all), so the node kept of a state is the first named; among given
  // candidates (in cluster order) nothing is skipped for it.
  const PolicyTraits traits = policy.traits();
  skip_repeats = !full && (traits.score_reads_only_node_state || traits.keys_node_state) && !names_cards() &&
                 !(traits.ties_by_name && among);
  // Unless the pod names cards by UUID: a filter that fits none of 10,000
  // nodes fits each state once.
  share_refusals = full && !names_cards();
  c.clear_seen_states(cluster);
  if (share_refusals && c.refused_at_.size() != cluster.size()) c.refused_at_.assign(cluster.size(), {});
  if (full) decision.failed.reserve(among ? among->size() : cluster.size());
  if (traits.ties_by_name) by_name = c.name_ranks(cluster);
}

Decision Scheduler::Placement::by_rank(Caches& c, const QuotaBook* quotas, const Cluster& cluster,
                                       const PodRequest& pod, Policy& policy, const KeyRanking& ranking,
                                       const std::vector<uint32_t>* allowed) {
  c.arm_quota(quotas, cluster, pod);
  Decision decision;
  // Its namespace has no room for the pod whole: no node can take it.
  if (c.quota_ && !c.quota_->admits(least_quota_use(cluster, pod))) return decision;
  const int sign = ranking.rank_sign(pod);
  c.order_.sync(cluster, ranking, sign);
  const GpuPolicy gpu = GpuPolicy::parse(policy.gpu_policy_for(pod));
  c.order_.visit_in_rank_order(sign, pod, [&](size_t id, double key) {
    if (allowed && (*allowed)[id] != c.allowed_stamp_) return false;
    const NodeView view = cluster.view(id);
    if (!may_fit(view, pod)) return false;
    FitResult fit = fit_pod(view, pod, gpu, c.scratch_, c.quota_);
    if (!fit.fits) return false;
    decision.node = id;
    decision.score = key;
    decision.allocation = std::move(fit.allocation);
    return true;
  });
  return decision;
}

bool Scheduler::Placement::refused_alike(size_t id) {
  if (!share_refusals) return false;
  const size_t first = c.first_with_state(cluster, id, policy);
  if (first == id || c.refused_at_[first].first != c.seen_stamp_) return false;
  const Refusal same =
      decision.failed[c.refused_at_[first].second].second;  // a copy: emplace may move the vector
  decision.failed.emplace_back(id, same);
  return true;
}

void Scheduler::Placement::refuse(size_t id, Refusal&& refusal) {
  if (share_refusals) c.refused_at_[id] = {c.seen_stamp_, static_cast<uint32_t>(decision.failed.size())};
  decision.failed.emplace_back(id, std::move(refusal));
}

void Scheduler::Placement::consider(size_t id, const NodeScore& s, const PodAllocation& a) {
  if (full) decision.fitting.push_back({id, s});
  if (!best.found || s.rank > best.score.rank || (s.rank == best.score.rank && before(id, best.node))) {
    best.found = true;
    best.node = id;
    best.score = s;
    best.allocation = a;
  }
}

void Scheduler::Placement::drop_cards_over_quota(const NodeView& view) {
  if (!quota) return;
  std::erase_if(c.cards_, [&](int card) {
    const DeviceGrant g = share_grant(view, *share, card);
    return !quota->admits(QuotaUse{g.memory_mib, g.cores});
  });
}

bool Scheduler::Placement::evaluate(const NodeView& view, NodeScore& score, PodAllocation* allocation,
                                    Refusal* refusal) {
  if (share && !refusal && !gpu.mutex) {
    // A share fits a node exactly when the host has room and some card
    // could take it alone (HAMi's fit with one card wanted: no NUMA or
    // topology step can refuse a single card; mutex can, so it takes the
    // full fit). Without a report to write, skip ordering the cards.
    if (host_shortfall(view, pod).any()) return false;
    fitting_cards(view, view.usage, pod, *share, c.cards_);
    drop_cards_over_quota(view);
    if (c.cards_.empty()) return false;
    c.candidate_.init_count = pod.init_containers.size();
    c.candidate_.containers.resize(pod.container_count());
    for (auto& grants : c.candidate_.containers) grants.clear();
    return evaluate_share_cards(view, score, allocation);
  }
  if (device_fit && !allocation && !refusal) {
    // A dialect's fit answers yes or no without building the grants;
    // its score reads the node, not them.
    if (!device_fit->fits(view, pod)) return false;
    score = policy.score(view, pod, c.no_grants_);
    return true;
  }
  FitResult fit = device_fit ? device_fit->fit(view, pod) : fit_pod(view, pod, gpu, c.scratch_, quota);
  if (!fit.fits) {
    if (refusal) *refusal = fit.refusal;
    return false;
  }
  if (!share) {
    score = policy.score(view, pod, fit.allocation);
    if (allocation) *allocation = std::move(fit.allocation);
    return true;
  }
  c.candidate_ = std::move(fit.allocation);
  fitting_cards(view, view.usage, pod, *share, c.cards_);
  drop_cards_over_quota(view);
  return evaluate_share_cards(view, score, allocation);
}

bool Scheduler::Placement::evaluate_share_cards(const NodeView& view, NodeScore& score,
                                                PodAllocation* allocation) {
  // The node scores as its best card would; the chooser breaks ties
  // between cards (the first card wins among equals).
  int best_card = -1;
  double best_card_rank = 0;
  for (size_t k = 0; k < c.cards_.size(); ++k) {
    const int card = c.cards_[k];
    if (skip_repeats && std::any_of(c.cards_.begin(), c.cards_.begin() + static_cast<std::ptrdiff_t>(k),
                                    [&](int earlier) { return same_card(view, earlier, card); }))
      continue;
    c.candidate_.containers[share_index].assign(1, share_grant(view, *share, card));
    const NodeScore s = policy.score(view, pod, c.candidate_);
    if (best_card >= 0 && s.rank < score.rank) continue;
    const double card_rank = chooser->card_rank(view, pod, c.candidate_);
    if (best_card < 0 || s.rank > score.rank || card_rank > best_card_rank) {
      best_card = card;
      score = s;
      best_card_rank = card_rank;
    }
  }
  if (best_card < 0) return false;
  if (allocation) {
    c.candidate_.containers[share_index].assign(1, share_grant(view, *share, best_card));
    *allocation = c.candidate_;
  }
  return true;
}

void Scheduler::Placement::step(size_t id, bool with_grants) {
  const NodeView view = cluster.view(id);
  if (!full && !may_fit(device_fit, view, pod)) return;
  if (skip_repeats && c.first_with_state(cluster, id, policy) != id) return;
  if (refused_alike(id)) return;
  NodeScore score;
  PodAllocation allocation;
  Refusal refusal;
  if (evaluate(view, score, with_grants ? &allocation : nullptr, full ? &refusal : nullptr))
    consider(id, score, allocation);
  else if (full)
    refuse(id, std::move(refusal));
}

void Scheduler::Placement::scan_given(const std::vector<size_t>& among) {
  // The nodes given (the extender's filter); without the full report,
  // in cluster order (place_among), skipping what cannot change the choice.
  for (size_t id : among) step(id, true);
}

void Scheduler::Placement::draw_lottery(NodeLottery& lottery) {
  // The study's Random: the feasible node with the highest lottery ticket.
  // Draw among nodes that may fit, fit only the drawn one, and drop it
  // when it does not: the same choice as scoring every node, without
  // fitting every node. Whether a node may fit a request shape changes
  // only with the node: kept per shape and updated from the change log.
  Caches::ShapeScores* cache = nullptr;
  // Nodes dropped from the kept list stay out until they change: a
  // refusal by quota is the namespace's, so it keeps no list.
  if (!quota && !names_cards()) {
    cache = &c.shape_scores(cluster, policy, c.shapes_.id(pod));
    auto& kept = *cache;
    if (kept.member_at.size() != cluster.size()) {
      kept.member_at.assign(cluster.size(), UINT32_MAX);
      kept.members.clear();
      kept.primed = false;
    }
    c.for_changed_nodes(cluster, kept, [&](size_t id) {
      const bool fits = may_fit(device_fit, cluster.view(id), pod);  // may fit: fit_pod decides if drawn
      const bool member = kept.member_at[id] != UINT32_MAX;
      if (fits && !member) {
        kept.member_at[id] = static_cast<uint32_t>(kept.members.size());
        kept.members.push_back(static_cast<uint32_t>(id));
      } else if (!fits && member) {
        drop_member(kept, id);
      }
    });
  } else {
    c.draw_scratch_.clear();
    for (size_t id = 0; id < cluster.size(); ++id)
      if (may_fit(device_fit, cluster.view(id), pod)) c.draw_scratch_.push_back(static_cast<uint32_t>(id));
  }
  std::vector<uint32_t>& drawn = cache ? cache->members : c.draw_scratch_;
  while (!drawn.empty()) {
    const size_t at = lottery.best_draw(drawn);
    const size_t id = drawn[at];
    NodeScore score;
    PodAllocation allocation;
    if (evaluate(cluster.view(id), score, &allocation, nullptr)) {
      best = {true, id, score, std::move(allocation)};
      return;
    }
    if (cache) {
      drop_member(*cache, id);  // until the node changes
    } else {
      drawn[at] = drawn.back();
      drawn.pop_back();
    }
  }
}

void Scheduler::Placement::best_of_kept_scores() {
  // A node's score for a request shape only changes with the node: keep
  // it per (shape, node) and re-score only nodes changed since.
  auto& cache = c.shape_scores(cluster, policy, c.shapes_.id(pod));
  if (cache.nodes.size() != cluster.size()) {
    cache.nodes.assign(cluster.size(), {});
    cache.fitting.reset(cluster.size());
    cache.primed = false;
  }
  c.for_changed_nodes(cluster, cache, [&](size_t id) {
    auto& e = cache.nodes[id];
    // A node in the state of one scored in this scan scores as it did.
    const size_t same = skip_repeats ? c.first_with_state(cluster, id, policy) : id;
    if (same != id) {
      e.fits = cache.nodes[same].fits;
      e.score = cache.nodes[same].score;
    } else {
      const NodeView view = cluster.view(id);
      e.fits = may_fit(device_fit, view, pod) && evaluate(view, e.score, nullptr, nullptr);
    }
    if (e.fits)
      cache.fitting.set(id, e.score.rank);
    else
      cache.fitting.remove(id);
  });
  if (const auto top = cache.fitting.best()) {
    best.found = true;
    best.node = *top;
    best.score = cache.nodes[*top].score;
    NodeScore again;
    evaluate(cluster.view(best.node), again, &best.allocation, nullptr);
  }
}

void Scheduler::Placement::scan_all() {
  // A dialect's grants are built for the chosen node only (below).
  const bool grants_later = device_fit != nullptr;
  for (size_t k = 0; k < cluster.size(); ++k) step(!by_name.empty() ? c.name_order_[k] : k, !grants_later);
  if (grants_later && best.found) best.allocation = device_fit->fit(cluster.view(best.node), pod).allocation;
}

Decision Scheduler::Placement::finish(size_t asked) {
  if (best.found) {
    decision.node = best.node;
    decision.score = best.score.shown;
    decision.allocation = std::move(best.allocation);
  }
  if (!full) return std::move(decision);
  // HAMi sorts the fitting nodes so the chosen one is last.
  std::stable_sort(decision.fitting.begin(), decision.fitting.end(),
                   [this](const FittingNode& a, const FittingNode& b) {
                     if (a.score.rank != b.score.rank) return a.score.rank < b.score.rank;
                     return before(b.node, a.node);
                   });
  if (decision.placed()) {
    decision.events.push_back(
        {"Normal", "FilteringSucceed", filtering_succeed_message(cluster, decision, asked)});
  } else {
    decision.failed_name_order = failed_by_name(cluster, decision, c.name_ranks(cluster));
    decision.events = filtering_failed_events(cluster, decision, asked);
  }
  return std::move(decision);
}

Scheduler::Scheduler() : caches_(std::make_unique<Caches>()) {}
Scheduler::~Scheduler() = default;
Scheduler::Scheduler(const Scheduler& other)
    : caches_(std::make_unique<Caches>(*other.caches_)), quotas_(other.quotas_) {
  // The copy's armed quota points into its own headroom.
  if (caches_->quota_) caches_->quota_ = &*caches_->headroom_;
}
Scheduler::Scheduler(Scheduler&& other) noexcept = default;

bool Scheduler::quota_armed() const { return caches_->quota_ != nullptr; }

std::span<const uint32_t> Scheduler::name_ranks(const Cluster& cluster) {
  return caches_->name_ranks(cluster);
}

Decision Scheduler::place(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail) {
  return place_impl(cluster, pod, policy, detail, nullptr, cluster.size());
}

Decision Scheduler::place_among(const Cluster& cluster, const std::vector<size_t>& candidates, size_t asked,
                                const PodRequest& pod, Policy& policy, Detail detail) {
  if (detail == Detail::Full) return place_impl(cluster, pod, policy, Detail::Full, &candidates, asked);
  Caches& c = *caches_;
  // Mark the candidates (a stamp per node: no clearing between calls).
  if (c.allowed_.size() != cluster.size()) {
    c.allowed_.assign(cluster.size(), 0);
    c.allowed_stamp_ = 0;
  }
  if (++c.allowed_stamp_ == 0) {
    std::fill(c.allowed_.begin(), c.allowed_.end(), 0);
    c.allowed_stamp_ = 1;
  }
  for (size_t id : candidates) c.allowed_[id] = c.allowed_stamp_;
  Decision decision;
  if (const KeyRanking* ranking = policy.key_ranking()) {
    policy.begin_pod(cluster, pod);
    decision = Placement::by_rank(c, quotas_, cluster, pod, policy, *ranking, &c.allowed_);
  } else {
    // In cluster order, so a node skipped for repeating an earlier node's
    // state could not have won a tie.
    c.allowed_ids_.clear();
    for (size_t id = 0; id < cluster.size(); ++id)
      if (c.allowed_[id] == c.allowed_stamp_) c.allowed_ids_.push_back(id);
    decision = place_impl(cluster, pod, policy, Detail::Minimal, &c.allowed_ids_, asked);
  }
  if (decision.placed()) return decision;
  return place_impl(cluster, pod, policy, Detail::Full, &candidates, asked);
}

Decision Scheduler::place_impl(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail,
                               const std::vector<size_t>* among, size_t asked) {
  Caches& c = *caches_;
  policy.begin_pod(cluster, pod);
  const KeyRanking* ranking = policy.key_ranking();
  if (!among && detail == Detail::Minimal && ranking)
    return Placement::by_rank(c, quotas_, cluster, pod, policy, *ranking, nullptr);
  c.arm_quota(quotas_, cluster, pod);
  const QuotaHeadroom* quota = policy.device_fit() ? nullptr : c.quota_;
  // Its namespace has no room for the pod whole: no node can take it. Only
  // the full report (each node's reason) has to look.
  if (quota && detail != Detail::Full && !quota->admits(least_quota_use(cluster, pod))) return Decision{};
  Placement p(c, cluster, pod, policy, detail, among, quota);
  // The quota's headroom is the namespace's, not the node's: scores kept
  // per node between placements would not see it move.
  const PolicyTraits traits = policy.traits();
  const bool keep_scores =
      !p.full && !quota && traits.score_changes_only_with_node && !p.names_cards() && !traits.ties_by_name;
  if (among)
    p.scan_given(*among);
  else if (NodeLottery* lottery = p.full ? nullptr : policy.lottery())
    p.draw_lottery(*lottery);
  else if (keep_scores)
    p.best_of_kept_scores();
  else
    p.scan_all();
  return p.finish(asked);
}

void Scheduler::commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy,
                       QuotaBook* quotas) {
  if (!decision.placed()) return;
  if (quotas) quotas->charge(pod.ns, quota_use(decision.allocation));
  commit(cluster, pod, decision, policy);
}

void Scheduler::commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy) {
  if (!decision.placed()) return;
  cluster.charge(*decision.node, decision.allocation, pod.host);
  reserved(policy, cluster.view(*decision.node), pod, decision.allocation);
}

std::string filtering_succeed_message(const Cluster& cluster, const Decision& decision, size_t considered) {
  std::vector<std::string> scores;
  scores.reserve(decision.fitting.size());
  for (const auto& f : decision.fitting)
    scores.push_back(fmt::format("{}:{:.2f}", cluster.node(f.node).name, static_cast<float>(f.score.shown)));
  return fmt::format("find fit node({}), {} nodes not fit, {} nodes fit({})",
                     cluster.node(*decision.node).name, considered - decision.fitting.size(),
                     decision.fitting.size(), fmt::join(scores, ","));
}

std::vector<uint32_t> failed_by_name(const Cluster& cluster, const Decision& decision,
                                     std::span<const uint32_t> name_rank) {
  std::vector<uint32_t> order(decision.failed.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (name_rank.size() == cluster.size())
    sort_by_name_rank(order, name_rank, [&](uint32_t i) { return decision.failed[i].first; });
  else
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return cluster.node(decision.failed[a].first).name < cluster.node(decision.failed[b].first).name;
    });
  return order;
}

std::vector<KubeEvent> filtering_failed_events(const Cluster& cluster, const Decision& decision,
                                               size_t considered) {
  // HAMi lists each reason's nodes by name under the reasons in name order
  // (a map of reason to nodes). The failed nodes are put in name order once,
  // then dealt to their reasons, which keeps each list in that order: at
  // 10,000 refused nodes a map keyed by text and a sort per reason cost more
  // than the fit.
  const std::vector<uint32_t>& order = decision.failed_name_order;
  std::array<std::vector<size_t>, kReasonCount> by_reason;
  const Refusal* previous = nullptr;
  std::vector<Reason> reasons_of_previous;
  for (const uint32_t i : order) {
    const auto& [id, refusal] = decision.failed[i];
    // Neighbours by name are mostly refused alike: their reasons are read once.
    if (!previous || !(*previous == refusal)) {
      reasons_of_previous.clear();
      refusal.for_each_reason([&](Reason r) { reasons_of_previous.push_back(r); });
      previous = &refusal;
    }
    for (const Reason r : reasons_of_previous) by_reason[static_cast<size_t>(r)].push_back(id);
  }
  std::vector<Reason> reasons;
  for (size_t r = 0; r < kReasonCount; ++r)
    if (!by_reason[r].empty()) reasons.push_back(static_cast<Reason>(r));
  std::sort(reasons.begin(), reasons.end(),
            [](Reason a, Reason b) { return reason_name(a) < reason_name(b); });

  std::vector<KubeEvent> events;
  for (const Reason reason : reasons) {
    const auto& nodes = by_reason[static_cast<size_t>(reason)];
    // One pass over the names: appending lets the text grow as it must,
    // where measuring it first read every node twice.
    std::string text = fmt::format("{} nodes {}(", nodes.size(), reason_name(reason));
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) text += ',';
      text += cluster.node(nodes[i]).name;
    }
    text += ')';
    events.push_back({"Warning", "FilteringFailed", std::move(text)});
  }
  events.push_back(
      {"Warning", "FilteringFailed", fmt::format("no available node, {} nodes do not meet", considered)});
  return events;
}

}  // namespace gpuslice::core
