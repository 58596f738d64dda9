// The node monitor's feedback, as HAMi's vGPUmonitor runs it every 5 s
// (cmd/vGPUmonitor/feedback.go, Observe): the rules that make the `default`
// core policy and task priorities work.
//  1. Each file whose recent_kernel is positive is decremented; if still
//     positive, its task counts as active on each of its cards, at its
//     priority (lower number = higher priority; negative priorities are not
//     counted).
//  2. A file with a higher-priority task active on a card it shares gets
//     recent_kernel = -1 (its launches wait); otherwise a negative value is
//     lifted to 0.
//  3. utilization_switch = 1 (hold the task to its sm_limit) when a
//     higher-priority task, or more than one task of its own priority, is
//     active on a card it shares; else 0.
// The shim sets recent_kernel = 2 on each launch (see SliceRegion).
#pragma once

#include <string>
#include <vector>

namespace gpuslice::realgpu {

// What the rules read and write in one file (RegionFile; tests stand in).
class FeedbackTarget {
 public:
  virtual ~FeedbackTarget() = default;
  virtual int device_max() const = 0;  // 16: every uuid entry is looked at
  virtual bool valid_uuid(int device) const = 0;
  virtual std::string uuid(int device) const = 0;
  virtual int priority() const = 0;
  virtual int recent_kernel() const = 0;
  // Writes `desired` if the field still holds `expected`; false when a task
  // changed it meanwhile (a launch set it to 2).
  virtual bool replace_recent_kernel(int expected, int desired) = 0;
  virtual int utilization_switch() const = 0;
  virtual void set_utilization_switch(int value) = 0;
};

// What one pass decided, for logs and tests.
struct FeedbackOutcome {
  int active = 0;     // tasks counted active
  int blocked = 0;    // files left with recent_kernel < 0
  int throttled = 0;  // files left with utilization_switch = 1
};

// One pass over every file of the node.
FeedbackOutcome observe(const std::vector<FeedbackTarget*>& files);

}  // namespace gpuslice::realgpu
