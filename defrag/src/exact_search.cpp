#include "exact_search.hpp"

#include <algorithm>
#include <unordered_map>

#include "bounds.hpp"

namespace gpuslice::defrag {

namespace {

class ExactSearch {
 public:
  ExactSearch(const Problem& problem, int max_moves, uint64_t budget,
              const std::function<void(double)>& progress)
      : problem_(problem),
        replay_(problem),
        max_moves_(max_moves),
        budget_(budget),
        progress_(progress),
        bounds_(replay_, 0) {}

  ExactOutcome run() {
    ExactOutcome out;
    int from = 0;
    if (bounds_.active()) {
      if (bounds_.never()) {
        out.impossible = true;
        out.refuted_below = max_moves_ + 1;
        return finish(out);
      }
      // The bound, counted exactly as far as it matters.
      for (int cap = 0; cap <= max_moves_; ++cap) {
        bounds_.raise_cap(cap);
        if (bounds_.bound() <= cap) break;
      }
      from = std::min(bounds_.bound(), max_moves_ + 1);
    }
    out.refuted_below = from;
    size_t movable = 0;
    for (uint32_t p = 0; p < problem_.pods.size(); ++p) movable += replay_.may_move(p) ? 1 : 0;
    for (int limit = from; limit <= max_moves_; ++limit) {
      // A depth whose first moves alone (every movable pod, limit - 1 deep)
      // exceed the budget cannot be searched through: give up before
      // spending it.
      double first_moves = 1;
      for (int k = 1; k < limit; ++k) first_moves *= static_cast<double>(movable);
      if (first_moves > static_cast<double>(budget_)) {
        out.gave_up = true;
        return finish(out);
      }
      if (bounds_.active()) bounds_.raise_cap(limit);
      best_.reset();
      cut_ = false;
      seen_.clear();
      touched_.clear();
      dfs(0, limit, 0);
      if (gave_up_) {
        out.gave_up = true;
        return finish(out);
      }
      if (best_) {
        out.plan = std::move(best_);
        return finish(out);
      }
      out.refuted_below = limit + 1;
      if (!cut_) {  // every branch ended for good: deeper searches find nothing either
        out.impossible = true;
        out.refuted_below = max_moves_ + 1;
        return finish(out);
      }
    }
    return finish(out);
  }

 private:
  struct Reached {
    int depth;
    int64_t mib;
    std::vector<size_t> touched;  // ascending
    std::vector<int32_t> budget_used;
  };

  ExactOutcome finish(ExactOutcome& out) {
    out.placements = replay_.placements();
    out.states = states_;
    return std::move(out);
  }

  bool over_budget() {
    const uint64_t spent = replay_.placements() + scanned_ / 64;
    if (spent > budget_) gave_up_ = true;
    if (progress_ && (++checks_ & 4095) == 0)
      progress_(static_cast<double>(spent) / static_cast<double>(budget_));
    return gave_up_;
  }

  // True when this state was reached before at no greater depth, having
  // moved no more memory (and, at equal memory, touched a subset of nodes)
  // and used no more of any budget: every continuation from here was
  // open to it too, at no smaller cost.
  bool dominated(int depth, int64_t mib) {
    auto& list = seen_[replay_.state_hash()];
    const auto used = budget_use();
    for (const Reached& r : list) {
      if (r.depth > depth) continue;
      if (!std::equal(r.budget_used.begin(), r.budget_used.end(), used.begin(),
                      [](int32_t a, int32_t b) { return a <= b; }))
        continue;
      if (r.mib < mib || (r.mib == mib && std::includes(touched_.begin(), touched_.end(), r.touched.begin(),
                                                        r.touched.end())))
        return true;
    }
    list.push_back({depth, mib, touched_, used});
    return false;
  }

  std::vector<int32_t> budget_use() const {
    std::vector<int32_t> used(problem_.budgets.size(), 0);
    for (const Move& m : replay_.moves())
      for (uint32_t b : problem_.pods[m.pod].budgets) ++used[b];
    return used;
  }

  // Whether a path costing (mib, touched) could still beat the best plan
  // found at this depth: the tie-breaks only grow along a path.
  bool may_beat_best(int64_t mib) const {
    if (!best_) return true;
    if (mib != best_->cost.mib) return mib < best_->cost.mib;
    return touched_.size() < best_->cost.nodes;
  }

  void dfs(int depth, int limit, int64_t mib) {
    ++states_;
    const int left = limit - depth;
    if (bounds_.active() && bounds_.bound() > left) {
      if (!bounds_.never()) cut_ = true;
      return;
    }
    if (left == 0) {
      auto placed = replay_.place_targets();
      const bool all = placed.size() == problem_.targets.size();
      replay_.remove_targets(placed);
      if (!all) {
        cut_ = true;
        return;
      }
      Plan plan = plan_of(problem_, replay_.moves(), std::move(placed));
      if (!best_ || plan.cost < best_->cost) best_ = std::move(plan);
      return;
    }
    if (depth > 0 && dominated(depth, mib)) return;

    std::vector<uint32_t> candidates;
    size_t movable = 0;
    for (uint32_t p = 0; p < problem_.pods.size(); ++p) movable += replay_.may_move(p) ? 1 : 0;
    scanned_ += problem_.pods.size();  // the scans for candidates count against the budget too
    if (left == 1 && bounds_.active() && bounds_.last_move_candidates(replay_, candidates)) {
      // The last move must be one of these; the others lead to states the
      // bound prunes at this depth, not at a deeper one.
      if (candidates.size() < movable && !bounds_.never()) cut_ = true;
    } else {
      for (uint32_t p = 0; p < problem_.pods.size(); ++p)
        if (replay_.may_move(p)) candidates.push_back(p);
    }
    for (uint32_t p : candidates) {
      if (over_budget()) return;
      if (!replay_.may_move(p)) continue;
      const auto m = replay_.move(p);
      if (!m) continue;        // fits nowhere once evicted: not a move
      if (m->to == m->from) {  // placed back where it was: changes nothing, spends a restart
        replay_.undo();
        continue;
      }
      const auto saved = touched_;
      for (size_t node : {m->from.node, m->to.node})
        touched_.insert(std::lower_bound(touched_.begin(), touched_.end(), node), node);
      touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
      const int64_t next_mib = mib + problem_.pods[p].gpu_mib;
      if (may_beat_best(next_mib)) {
        if (bounds_.active()) {
          bounds_.update(m->from.node, left - 1);
          bounds_.update(m->to.node, left - 1);
        }
        dfs(depth + 1, limit, next_mib);
        replay_.undo();
        if (bounds_.active()) {
          bounds_.update(m->from.node, left);
          bounds_.update(m->to.node, left);
        }
      } else {
        replay_.undo();
      }
      touched_ = saved;
      if (gave_up_) return;
    }
  }

  const Problem& problem_;
  Replay replay_;
  int max_moves_;
  uint64_t budget_;
  const std::function<void(double)>& progress_;
  uint64_t checks_ = 0;
  Bounds bounds_;
  std::optional<Plan> best_;
  bool cut_ = false, gave_up_ = false;
  uint64_t states_ = 0;
  uint64_t scanned_ = 0;  // pods looked at while choosing moves
  std::vector<size_t> touched_;
  std::unordered_map<uint64_t, std::vector<Reached>> seen_;
};

}  // namespace

ExactOutcome exact_search(const Problem& problem, int max_moves, uint64_t budget,
                          const std::function<void(double)>& progress) {
  return ExactSearch(problem, max_moves, budget, progress).run();
}

}  // namespace gpuslice::defrag
