#include "gpuslice/realgpu/feedback.hpp"

#include <algorithm>
#include <map>

namespace gpuslice::realgpu {

namespace {

// Active tasks per card UUID, by priority.
using ActiveByPriority = std::map<std::string, std::vector<int>>;

// Whether a task of a higher priority (a lower number) than `p` is active
// on one of the file's cards.
bool higher_active(const ActiveByPriority& active, int p, const FeedbackTarget& f) {
  for (int d = 0; d < f.device_max(); ++d) {
    if (!f.valid_uuid(d)) continue;
    const auto it = active.find(f.uuid(d));
    if (it == active.end()) continue;
    const int n = std::min<int>(p, static_cast<int>(it->second.size()));
    for (int q = 0; q < n; ++q)
      if (it->second[static_cast<size_t>(q)] > 0) return true;
  }
  return false;
}

bool shares_with_peer(const ActiveByPriority& active, int p, const FeedbackTarget& f) {
  if (p < 0) return false;
  for (int d = 0; d < f.device_max(); ++d) {
    if (!f.valid_uuid(d)) continue;
    const auto it = active.find(f.uuid(d));
    if (it != active.end() && p < static_cast<int>(it->second.size()) &&
        it->second[static_cast<size_t>(p)] > 1)
      return true;
  }
  return false;
}

}  // namespace

FeedbackOutcome observe(const std::vector<FeedbackTarget*>& files) {
  FeedbackOutcome out;
  ActiveByPriority active;
  for (FeedbackTarget* f : files) {
    int recent = f->recent_kernel();
    // A launch may set 2 while we decrement: then it stays 2 (it just ran).
    while (recent > 0 && !f->replace_recent_kernel(recent, recent - 1)) recent = f->recent_kernel();
    if (recent <= 1) continue;  // decremented to 0 (or was not positive): not active
    const int p = f->priority();
    if (p < 0) continue;
    ++out.active;
    for (int d = 0; d < f->device_max(); ++d) {
      if (!f->valid_uuid(d)) continue;
      auto& counts = active[f->uuid(d)];
      if (counts.size() <= static_cast<size_t>(p)) counts.resize(static_cast<size_t>(p) + 1, 0);
      ++counts[static_cast<size_t>(p)];
    }
  }
  for (FeedbackTarget* f : files) {
    const int p = f->priority();
    if (higher_active(active, p, *f)) {
      for (int recent = f->recent_kernel(); recent >= 0 && !f->replace_recent_kernel(recent, -1);)
        recent = f->recent_kernel();
    } else {
      for (int recent = f->recent_kernel(); recent < 0 && !f->replace_recent_kernel(recent, 0);)
        recent = f->recent_kernel();
    }
    const bool hold = higher_active(active, p, *f) || shares_with_peer(active, p, *f);
    const int want = hold ? 1 : 0;
    if (f->utilization_switch() != want) f->set_utilization_switch(want);
    out.blocked += f->recent_kernel() < 0;
    out.throttled += hold;
  }
  return out;
}

}  // namespace gpuslice::realgpu
