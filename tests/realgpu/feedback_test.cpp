// The monitor's feedback rules (HAMi's cmd/vGPUmonitor/feedback.go) on
// files held in memory: who is counted active, who is blocked, who is held
// to its share.
#include "gpuslice/realgpu/feedback.hpp"

#include <catch2/catch.hpp>

using namespace gpuslice::realgpu;

namespace {

struct File : FeedbackTarget {
  File(std::vector<std::string> cards, int p, int recent = 2, int sw = -1)
      : uuids(std::move(cards)), prio(p), recent_value(recent), switch_value(sw) {}
  std::vector<std::string> uuids;
  int prio;
  int recent_value;
  int switch_value;
  int launches_racing = 0;  // replace_recent_kernel fails this many times (a launch set 2)

  int device_max() const override { return 16; }
  bool valid_uuid(int d) const override { return d < static_cast<int>(uuids.size()) && !uuids[d].empty(); }
  std::string uuid(int d) const override { return valid_uuid(d) ? uuids[d] : std::string(); }
  int priority() const override { return prio; }
  int recent_kernel() const override { return recent_value; }
  bool replace_recent_kernel(int expected, int desired) override {
    if (launches_racing > 0) {
      --launches_racing;
      recent_value = 2;
      return false;
    }
    if (recent_value != expected) return false;
    recent_value = desired;
    return true;
  }
  int utilization_switch() const override { return switch_value; }
  void set_utilization_switch(int v) override { switch_value = v; }
  void launch() {
    if (recent_value >= 0) recent_value = 2;
  }
};

FeedbackOutcome pass(std::initializer_list<File*> files) {
  return observe(std::vector<FeedbackTarget*>(files.begin(), files.end()));
}

}  // namespace

TEST_CASE("a task alone on its card is active but not held to its share") {
  File a({"GPU-a"}, 1);
  const auto out = pass({&a});
  CHECK(out.active == 1);
  CHECK(a.recent_kernel() == 1);
  CHECK(a.utilization_switch() == 0);
  // No launch for a period: 1 -> 0, no longer active.
  CHECK(pass({&a}).active == 0);
  CHECK(a.recent_kernel() == 0);
}

TEST_CASE("two active tasks of one priority on one card are both held - alone again, released") {
  File a({"GPU-a"}, 1), b({"GPU-a"}, 1);
  pass({&a, &b});
  CHECK(a.utilization_switch() == 1);
  CHECK(b.utilization_switch() == 1);
  CHECK(a.recent_kernel() == 1);
  // Only a keeps launching: b decays to 0 and stops counting.
  a.launch();
  pass({&a, &b});
  CHECK(b.recent_kernel() == 0);
  CHECK(a.utilization_switch() == 0);
  CHECK(b.utilization_switch() == 0);
}

TEST_CASE("tasks on different cards do not hold each other") {
  File a({"GPU-a"}, 1), b({"GPU-b"}, 1);
  pass({&a, &b});
  CHECK(a.utilization_switch() == 0);
  CHECK(b.utilization_switch() == 0);
}

TEST_CASE("a higher-priority task blocks a lower one on a shared card, which is lifted when it stops") {
  File high({"GPU-a"}, 0), low({"GPU-a"}, 1);
  pass({&high, &low});
  CHECK(low.recent_kernel() == -1);  // its launches wait
  CHECK(low.utilization_switch() == 1);
  CHECK(high.recent_kernel() == 1);
  CHECK(high.utilization_switch() == 0);  // alone at its priority: full speed
  // A blocked task cannot mark itself active (the shim waits before it does).
  low.launch();
  CHECK(low.recent_kernel() == -1);
  // The high task stops launching: 1 -> 0, then nothing blocks the low one.
  pass({&high, &low});
  CHECK(high.recent_kernel() == 0);
  CHECK(low.recent_kernel() == 0);
  CHECK(low.utilization_switch() == 0);
}

TEST_CASE("contention on any of a task's cards counts, as HAMi's multi-device checks do") {
  File high({"GPU-z"}, 0), low({"GPU-x", "GPU-y", "GPU-z"}, 1);
  pass({&high, &low});
  CHECK(low.recent_kernel() == -1);
  File other({"GPU-q"}, 0), low2({"GPU-x", "GPU-y"}, 1);
  pass({&other, &low2});
  CHECK(low2.recent_kernel() == 1);
}

TEST_CASE("negative priorities are never counted - a lower task of priority 2 sees priority 0 and 1") {
  File neg({"GPU-a"}, -1), p2({"GPU-a"}, 2);
  pass({&neg, &p2});
  CHECK(p2.recent_kernel() == 1);
  CHECK(p2.utilization_switch() == 0);
  File p1({"GPU-a"}, 1), p2b({"GPU-a"}, 2);
  pass({&p1, &p2b});
  CHECK(p2b.recent_kernel() == -1);
}

TEST_CASE("a launch racing the decrement keeps the task active") {
  File a({"GPU-a"}, 1, 1);
  a.launches_racing = 1;  // the shim writes 2 between the monitor's read and write
  CHECK(pass({&a}).active == 1);
  CHECK(a.recent_kernel() == 1);
}

TEST_CASE("the first pass writes the switch over the shim's no-monitor mark") {
  File a({"GPU-a"}, 1, 0, -1);
  pass({&a});
  CHECK(a.utilization_switch() == 0);
}
