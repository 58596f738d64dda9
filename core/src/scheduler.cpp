#include "gpuslice/core/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpuslice/core/place.hpp"

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

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

uint64_t state_hash(const Cluster& cluster, size_t id) {
  uint64_t h = mix(cluster.shape(id), static_cast<uint64_t>(cluster.host_used(id).cpu_milli));
  h = mix(h, static_cast<uint64_t>(cluster.host_used(id).memory_mib));
  for (const auto& u : cluster.usage(id)) {
    h = mix(h, static_cast<uint64_t>(u.slots));
    h = mix(h, static_cast<uint64_t>(u.memory_mib));
    h = mix(h, static_cast<uint64_t>(u.cores));
  }
  return h;
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

int64_t Scheduler::largest_card_mib(const Cluster& cluster) {
  if (largest_card_epoch_ != cluster.epoch()) {
    largest_card_mib_ = core::largest_card_mib(cluster);
    largest_card_epoch_ = cluster.epoch();
  }
  return largest_card_mib_;
}

void Scheduler::arm_quota(const Cluster& cluster, const PodRequest& pod) {
  quota_ = nullptr;
  if (!quotas_ || !quotas_->has_limits()) return;
  headroom_ = quotas_->headroom(pod.ns);
  if (!headroom_) return;
  // Armed only when the most the pod could count on any node passes it.
  if (!headroom_->admits(most_quota_use(pod, largest_card_mib(cluster)))) quota_ = &*headroom_;
}

Decision Scheduler::place_by_rank(const Cluster& cluster, const PodRequest& pod, Policy& policy,
                                  const KeyRanking& ranking, const std::vector<uint32_t>* allowed) {
  arm_quota(cluster, pod);
  Decision decision;
  // Its namespace has no room for the pod whole: no node can take it.
  if (quota_ && !quota_->admits(least_quota_use(cluster, pod))) return decision;
  const int sign = ranking.rank_sign(pod);
  order_.sync(cluster, ranking, sign);
  const GpuPolicy gpu = GpuPolicy::parse(policy.gpu_policy_for(pod));
  order_.visit_in_rank_order(sign, pod, [&](size_t id, double key) {
    if (allowed && (*allowed)[id] != allowed_stamp_) return false;
    const NodeView view = cluster.view(id);
    if (!may_fit(view, pod)) return false;
    FitResult fit = fit_pod(view, pod, gpu, scratch_, quota_);
    if (!fit.fits) return false;
    decision.node = id;
    decision.score = key;
    decision.allocation = std::move(fit.allocation);
    return true;
  });
  return decision;
}

void Scheduler::clear_seen_states(const Cluster& cluster) {
  size_t want = 16;
  while (want < 2 * cluster.size()) want *= 2;  // at most half full
  if (seen_states_.size() != want) {
    seen_states_.assign(want, {});
    seen_stamp_ = 0;
  }
  if (++seen_stamp_ == 0) {
    std::fill(seen_states_.begin(), seen_states_.end(), SeenState{});
    std::fill(refused_at_.begin(), refused_at_.end(), std::pair<uint32_t, uint32_t>{});
    seen_stamp_ = 1;
  }
}

size_t Scheduler::first_with_state(const Cluster& cluster, size_t id, const Policy& policy) {
  uint64_t key = 0;
  if (policy.keys_node_state()) {
    const auto own = policy.node_state_key(id);
    if (!own) return id;  // the policy cannot tell: a state of its own
    key = *own;
  }
  if (state_epoch_ != cluster.epoch() || state_hash_.size() != cluster.size()) {
    state_epoch_ = cluster.epoch();
    state_hash_.assign(cluster.size(), {UINT64_MAX, 0});
    verified_same_.assign(cluster.size(), {});
  }
  auto& cached = state_hash_[id];
  if (cached.first != cluster.version(id)) cached = {cluster.version(id), state_hash(cluster, id)};
  const uint64_t hash = mix(cached.second, key);
  const size_t mask = seen_states_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    SeenState& e = seen_states_[slot];
    if (e.stamp != seen_stamp_) {
      e = {hash, key, static_cast<uint32_t>(id), seen_stamp_};
      return id;
    }
    // Equal hashes are checked: a collision is a state of its own. A check
    // holds while neither node changes: a filter naming 10,000 unchanged
    // nodes again compares versions, not every card's usage.
    if (e.hash == hash && e.key == key) {
      VerifiedSame& v = verified_same_[id];
      const VerifiedSame now{e.node, cluster.version(e.node), cluster.version(id)};
      if (v == now) return e.node;
      if (cluster.same_state(e.node, id)) {
        v = now;
        return e.node;
      }
    }
  }
}

Scheduler::ShapeScores& Scheduler::shape_scores(const Cluster& cluster, const Policy& policy, size_t shape) {
  // Kept while the cluster (epoch) and the policy stay the same.
  if (score_epoch_ != cluster.epoch() || score_policy_ != &policy) {
    score_cache_.clear();
    score_epoch_ = cluster.epoch();
    score_policy_ = &policy;
  }
  // Bounded memory: about 32 bytes per (shape, node); start over past 16M.
  if (!score_cache_.count(shape) && (score_cache_.size() + 1) * cluster.size() > (size_t{1} << 24))
    score_cache_.clear();
  return score_cache_[shape];
}

template <typename F>
void Scheduler::for_changed_nodes(const Cluster& cluster, ShapeScores& cache, F visit) {
  const size_t seen = cache.seen_changes;
  cache.seen_changes = cluster.change_count();
  if (!cache.primed) {
    for (size_t id = 0; id < cluster.size(); ++id) visit(id);
    cache.primed = true;
  } else if (seen < cluster.first_change() || cluster.change_count() - seen >= cluster.size()) {
    // The log moved past this cache, or is longer than the cluster: one
    // scan in node order, visiting each node changed since.
    for (size_t id = 0; id < cluster.size(); ++id)
      if (cluster.changed_at(id) > seen) visit(id);
  } else {
    // Each node changed since, at its latest entry in the log.
    for (size_t i = seen; i < cluster.change_count(); ++i) {
      const uint32_t id = cluster.changed_node(i);
      if (cluster.changed_at(id) == i + 1) visit(id);
    }
  }
}

Decision Scheduler::place(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail) {
  return place_impl(cluster, pod, policy, detail, nullptr, cluster.size());
}

Decision Scheduler::place_among(const Cluster& cluster, const std::vector<size_t>& candidates, size_t asked,
                                const PodRequest& pod, Policy& policy, Detail detail) {
  if (detail == Detail::Full) return place_impl(cluster, pod, policy, Detail::Full, &candidates, asked);
  // Mark the candidates (a stamp per node: no clearing between calls).
  if (allowed_.size() != cluster.size()) {
    allowed_.assign(cluster.size(), 0);
    allowed_stamp_ = 0;
  }
  if (++allowed_stamp_ == 0) {
    std::fill(allowed_.begin(), allowed_.end(), 0);
    allowed_stamp_ = 1;
  }
  for (size_t id : candidates) allowed_[id] = allowed_stamp_;
  Decision decision;
  if (const KeyRanking* ranking = policy.key_ranking()) {
    policy.begin_pod(cluster, pod);
    decision = place_by_rank(cluster, pod, policy, *ranking, &allowed_);
  } else {
    // In cluster order, so a node skipped for repeating an earlier node's
    // state could not have won a tie.
    allowed_ids_.clear();
    for (size_t id = 0; id < cluster.size(); ++id)
      if (allowed_[id] == allowed_stamp_) allowed_ids_.push_back(id);
    decision = place_impl(cluster, pod, policy, Detail::Minimal, &allowed_ids_, asked);
  }
  if (decision.placed()) return decision;
  return place_impl(cluster, pod, policy, Detail::Full, &candidates, asked);
}

Decision Scheduler::place_impl(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail,
                               const std::vector<size_t>* among, size_t asked) {
  policy.begin_pod(cluster, pod);
  const KeyRanking* ranking = policy.key_ranking();
  if (!among && detail == Detail::Minimal && ranking) return place_by_rank(cluster, pod, policy, *ranking);
  arm_quota(cluster, pod);
  // HAMi's quota is HAMi's fit's: a dialect's own fit knows none.
  const QuotaHeadroom* quota = policy.device_fit() ? nullptr : quota_;
  Decision decision;
  // Its namespace has no room for the pod whole: no node can take it. Only
  // the full report (each node's reason) has to look.
  if (quota && detail != Detail::Full && !quota->admits(least_quota_use(cluster, pod))) return decision;
  const GpuPolicy gpu = GpuPolicy::parse(policy.gpu_policy_for(pod));
  DeviceFit* device_fit = policy.device_fit();
  size_t share_index = 0;
  CardChooser* chooser = policy.card_chooser();
  const ContainerRequest* share = chooser ? share_request(pod, share_index) : nullptr;
  const bool full = detail == Detail::Full;
  // Without the full report, nodes that cannot fit or that repeat an
  // earlier node's state are skipped: neither can change the choice.
  // A policy breaking ties by name has its nodes scanned in name order
  // (below), so the node kept of a state is the first named; among given
  // candidates (in cluster order) nothing is skipped for it.
  const bool skip_repeats = !full && (policy.score_reads_only_node_state() || policy.keys_node_state()) &&
                            pod.selectors.use_uuids.empty() && pod.selectors.nouse_uuids.empty() &&
                            !(policy.ties_by_name() && among);
  // The quota's headroom is the namespace's, not the node's: scores kept
  // per node between placements would not see it move.
  const bool cache_scores = !full && !quota && policy.score_changes_only_with_node() &&
                            pod.selectors.use_uuids.empty() && pod.selectors.nouse_uuids.empty() &&
                            !policy.ties_by_name();
  clear_seen_states(cluster);
  // The full report: a node in the state of one refused earlier in this
  // scan is refused alike, as fit reads nothing of a node but its state
  // (shape, host use, card use), unless the pod names cards by UUID. A
  // filter that fits none of 10,000 nodes fits each state once.
  const bool share_refusals = full && pod.selectors.use_uuids.empty() && pod.selectors.nouse_uuids.empty();
  if (share_refusals && refused_at_.size() != cluster.size()) refused_at_.assign(cluster.size(), {});
  if (full) decision.failed.reserve(among ? among->size() : cluster.size());
  auto refused_alike = [&](size_t id) {
    if (!share_refusals) return false;
    const size_t first = first_with_state(cluster, id, policy);
    if (first == id || refused_at_[first].first != seen_stamp_) return false;
    const Refusal same =
        decision.failed[refused_at_[first].second].second;  // a copy: emplace may move the vector
    decision.failed.emplace_back(id, same);
    return true;
  };
  auto refuse = [&](size_t id, Refusal&& refusal) {
    if (share_refusals) refused_at_[id] = {seen_stamp_, static_cast<uint32_t>(decision.failed.size())};
    decision.failed.emplace_back(id, std::move(refusal));
  };

  // Among equal ranks the node first in the cluster wins, whatever order
  // the candidates came in (place_by_rank breaks ties the same way), or the
  // node whose name sorts first for a policy that says so (KAI).
  const std::span<const uint32_t> by_name =
      policy.ties_by_name() ? name_ranks(cluster) : std::span<const uint32_t>{};
  auto before = [by_name](size_t a, size_t b) { return !by_name.empty() ? by_name[a] < by_name[b] : a < b; };
  Best best;
  auto consider = [&](size_t id, const NodeScore& s, const PodAllocation& a) {
    if (full) decision.fitting.push_back({id, s});
    if (!best.found || s.rank > best.score.rank || (s.rank == best.score.rank && before(id, best.node))) {
      best.found = true;
      best.node = id;
      best.score = s;
      best.allocation = a;
    }
  };

  // Fit and score one node; for a share the policy's best card. False when
  // the pod does not fit (then `refusal` says why, in the full report).
  // A share's cards over the quota are not candidates (a share is the pod's
  // only device container, on one card: its grant is its quota total).
  auto drop_cards_over_quota = [&](const NodeView& view) {
    if (!quota) return;
    std::erase_if(cards_, [&](int card) {
      const DeviceGrant g = share_grant(view, *share, card);
      return !quota->admits(QuotaUse{g.memory_mib, g.cores});
    });
  };
  auto evaluate = [&](const NodeView& view, NodeScore& score, PodAllocation* allocation, Refusal* refusal) {
    if (share && !refusal && !gpu.mutex) {
      // A share fits a node exactly when the host has room and some card
      // could take it alone (HAMi's fit with one card wanted: no NUMA or
      // topology step can refuse a single card; mutex can, so it takes the
      // full fit). Without a report to write, skip ordering the cards.
      if (host_shortfall(view, pod).any()) return false;
      fitting_cards(view, view.usage, pod, *share, cards_);
      drop_cards_over_quota(view);
      if (cards_.empty()) return false;
      candidate_.init_count = pod.init_containers.size();
      candidate_.containers.resize(pod.container_count());
      for (auto& grants : candidate_.containers) grants.clear();
    } else {
      if (device_fit && !allocation && !refusal) {
        // A dialect's fit answers yes or no without building the grants;
        // its score reads the node, not them.
        if (!device_fit->fits(view, pod)) return false;
        score = policy.score(view, pod, no_grants_);
        return true;
      }
      FitResult fit = device_fit ? device_fit->fit(view, pod) : fit_pod(view, pod, gpu, scratch_, quota);
      if (!fit.fits) {
        if (refusal) *refusal = fit.refusal;
        return false;
      }
      if (!share) {
        score = policy.score(view, pod, fit.allocation);
        if (allocation) *allocation = std::move(fit.allocation);
        return true;
      }
      candidate_ = std::move(fit.allocation);
      fitting_cards(view, view.usage, pod, *share, cards_);
      drop_cards_over_quota(view);
    }
    // The node scores as its best card would; the chooser breaks ties
    // between cards (the first card wins among equals).
    int best_card = -1;
    double best_card_rank = 0;
    for (size_t k = 0; k < cards_.size(); ++k) {
      const int card = cards_[k];
      if (skip_repeats && std::any_of(cards_.begin(), cards_.begin() + static_cast<std::ptrdiff_t>(k),
                                      [&](int earlier) { return same_card(view, earlier, card); }))
        continue;
      candidate_.containers[share_index].assign(1, share_grant(view, *share, card));
      const NodeScore s = policy.score(view, pod, candidate_);
      if (best_card >= 0 && s.rank < score.rank) continue;
      const double card_rank = chooser->card_rank(view, pod, candidate_);
      if (best_card < 0 || s.rank > score.rank || card_rank > best_card_rank) {
        best_card = card;
        score = s;
        best_card_rank = card_rank;
      }
    }
    if (best_card < 0) return false;
    if (allocation) {
      candidate_.containers[share_index].assign(1, share_grant(view, *share, best_card));
      *allocation = candidate_;
    }
    return true;
  };

  if (among) {
    // The nodes given (the extender's filter); without the full report,
    // in cluster order (place_among), skipping what cannot change the choice.
    for (size_t id : *among) {
      const NodeView view = cluster.view(id);
      if (!full && !may_fit(device_fit, view, pod)) continue;
      if (skip_repeats && first_with_state(cluster, id, policy) != id) continue;
      if (refused_alike(id)) continue;
      NodeScore score;
      PodAllocation allocation;
      Refusal refusal;
      if (evaluate(view, score, &allocation, full ? &refusal : nullptr))
        consider(id, score, allocation);
      else if (full)
        refuse(id, std::move(refusal));
    }
  } else if (NodeLottery* lottery = full ? nullptr : policy.lottery()) {
    // The study's Random: the feasible node with the highest lottery ticket.
    // Draw among nodes that may fit, fit only the drawn one, and drop it
    // when it does not: the same choice as scoring every node, without
    // fitting every node. Whether a node may fit a request shape changes
    // only with the node: kept per shape and updated from the change log.
    ShapeScores* cache = nullptr;
    // Nodes dropped from the kept list stay out until they change: a
    // refusal by quota is the namespace's, so it keeps no list.
    if (!quota && pod.selectors.use_uuids.empty() && pod.selectors.nouse_uuids.empty()) {
      cache = &shape_scores(cluster, policy, shapes_.id(pod));
      auto& c = *cache;
      if (c.member_at.size() != cluster.size()) {
        c.member_at.assign(cluster.size(), UINT32_MAX);
        c.members.clear();
        c.primed = false;
      }
      for_changed_nodes(cluster, c, [&](size_t id) {
        const bool fits = may_fit(device_fit, cluster.view(id), pod);  // may fit: fit_pod decides if drawn
        const bool member = c.member_at[id] != UINT32_MAX;
        if (fits && !member) {
          c.member_at[id] = static_cast<uint32_t>(c.members.size());
          c.members.push_back(static_cast<uint32_t>(id));
        } else if (!fits && member) {
          drop_member(c, id);
        }
      });
    } else {
      draw_scratch_.clear();
      for (size_t id = 0; id < cluster.size(); ++id)
        if (may_fit(device_fit, cluster.view(id), pod)) draw_scratch_.push_back(static_cast<uint32_t>(id));
    }
    std::vector<uint32_t>& drawn = cache ? cache->members : draw_scratch_;
    while (!drawn.empty()) {
      const size_t at = lottery->best_draw(drawn);
      const size_t id = drawn[at];
      NodeScore score;
      PodAllocation allocation;
      if (evaluate(cluster.view(id), score, &allocation, nullptr)) {
        best = {true, id, score, std::move(allocation)};
        break;
      }
      if (cache) {
        drop_member(*cache, id);  // until the node changes
      } else {
        drawn[at] = drawn.back();
        drawn.pop_back();
      }
    }
  } else if (cache_scores) {
    // A node's score for a request shape only changes with the node: keep
    // it per (shape, node) and re-score only nodes changed since.
    auto& cache = shape_scores(cluster, policy, shapes_.id(pod));
    if (cache.nodes.size() != cluster.size()) {
      cache.nodes.assign(cluster.size(), {});
      cache.fitting.reset(cluster.size());
      cache.primed = false;
    }
    auto rescore = [&](size_t id) {
      auto& e = cache.nodes[id];
      // A node in the state of one scored in this scan scores as it did.
      const size_t same = skip_repeats ? first_with_state(cluster, id, policy) : id;
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
    };
    for_changed_nodes(cluster, cache, rescore);
    if (const auto top = cache.fitting.best()) {
      best.found = true;
      best.node = *top;
      best.score = cache.nodes[*top].score;
    }
    if (best.found) {
      NodeScore again;
      evaluate(cluster.view(best.node), again, &best.allocation, nullptr);
    }
  } else {
    // A dialect's grants are built for the chosen node only (below).
    const bool grants_later = device_fit != nullptr;
    for (size_t k = 0; k < cluster.size(); ++k) {
      const size_t id = !by_name.empty() ? name_order_[k] : k;
      const NodeView view = cluster.view(id);
      if (!full && !may_fit(device_fit, view, pod)) continue;
      if (skip_repeats && first_with_state(cluster, id, policy) != id) continue;
      if (refused_alike(id)) continue;
      NodeScore score;
      PodAllocation allocation;
      Refusal refusal;
      if (evaluate(view, score, grants_later ? nullptr : &allocation, full ? &refusal : nullptr))
        consider(id, score, allocation);
      else if (full)
        refuse(id, std::move(refusal));
    }
    if (grants_later && best.found)
      best.allocation = device_fit->fit(cluster.view(best.node), pod).allocation;
  }

  if (best.found) {
    decision.node = best.node;
    decision.score = best.score.shown;
    decision.allocation = std::move(best.allocation);
  }
  if (full) {
    // HAMi sorts the fitting nodes so the chosen one is last.
    std::stable_sort(decision.fitting.begin(), decision.fitting.end(),
                     [&before](const FittingNode& a, const FittingNode& b) {
                       if (a.score.rank != b.score.rank) return a.score.rank < b.score.rank;
                       return before(b.node, a.node);
                     });
    const size_t considered = asked;
    if (decision.placed()) {
      decision.events.push_back(
          {"Normal", "FilteringSucceed", filtering_succeed_message(cluster, decision, considered)});
    } else {
      decision.failed_name_order = failed_by_name(cluster, decision, name_ranks(cluster));
      decision.events = filtering_failed_events(cluster, decision, considered);
    }
  }
  return decision;
}

std::span<const uint32_t> Scheduler::name_ranks(const Cluster& cluster) {
  if (name_epoch_ != cluster.epoch() || name_rank_.size() != cluster.size()) {
    std::vector<uint32_t> ids(cluster.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i);
    std::sort(ids.begin(), ids.end(),
              [&](uint32_t a, uint32_t b) { return cluster.node(a).name < cluster.node(b).name; });
    name_rank_.assign(cluster.size(), 0);
    for (size_t r = 0; r < ids.size(); ++r) name_rank_[ids[r]] = static_cast<uint32_t>(r);
    name_order_ = std::move(ids);
    name_epoch_ = cluster.epoch();
  }
  return name_rank_;
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

std::vector<Event> filtering_failed_events(const Cluster& cluster, const Decision& decision,
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

  std::vector<Event> events;
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
