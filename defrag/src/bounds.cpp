#include "bounds.hpp"

#include <algorithm>

namespace gpuslice::defrag {

Bounds::Bounds(Replay& replay, int cap, size_t most) {
  const auto& targets = replay.problem().targets;
  for (const auto& t : targets)
    if (!monotone_fit(t.request)) return;
  // Which targets fail now: the first that the placement in order stops at,
  // then the others that fit nowhere on their own.
  const auto placed = replay.place_targets();
  const size_t first = placed.size();
  replay.remove_targets(placed);
  if (first == targets.size()) return;
  std::vector<uint32_t> order{static_cast<uint32_t>(first)};
  for (uint32_t i = 0; i < targets.size(); ++i)
    if (i != first) order.push_back(i);
  for (uint32_t i : order) {
    if (per_target_.size() >= most) break;
    auto rb = std::make_unique<RoomBound>(replay, targets[i].request, std::min(cap, 0));
    if (i != first && rb->bound() == 0) continue;  // fits somewhere now: bounds nothing
    rb->raise_cap(cap);
    per_target_.push_back(std::move(rb));
    targets_.push_back(i);
  }
}

int Bounds::bound() const {
  int b = 0;
  for (const auto& rb : per_target_) b = std::max(b, rb->bound());
  return b;
}

bool Bounds::never() const {
  return std::any_of(per_target_.begin(), per_target_.end(), [](const auto& rb) { return rb->never(); });
}

void Bounds::update(size_t node, int cap) {
  for (auto& rb : per_target_) rb->update(node, cap);
}

void Bounds::raise_cap(int cap) {
  for (auto& rb : per_target_) rb->raise_cap(cap);
}

bool Bounds::last_move_candidates(const Replay& replay, std::vector<uint32_t>& out) {
  out.clear();
  for (const auto& rb : per_target_)
    if (rb->bound() == 0) return false;
  if (per_target_.empty()) return false;
  const auto& pods = replay.problem().pods;
  for (uint32_t p = 0; p < pods.size(); ++p) {
    if (!replay.may_move(p)) continue;
    const size_t node = replay.place_of(p).node;
    const uint32_t alone[] = {p};
    const bool frees_all = std::all_of(per_target_.begin(), per_target_.end(), [&](const auto& rb) {
      return rb->at(node) <= 1 && rb->fits_without(node, alone);
    });
    if (frees_all) out.push_back(p);
  }
  return true;
}

}  // namespace gpuslice::defrag
