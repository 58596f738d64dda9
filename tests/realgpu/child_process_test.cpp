// Child processes never hang the caller, and a child's run time ends when it
// exits, not when the caller gets round to waiting for it.
#include "gpuslice/realgpu/child_process.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "gpuslice/realgpu/clock.hpp"

using namespace gpuslice::realgpu;

TEST_CASE("wait_for kills a child that outlives its limit") {
  const double start = monotonic_seconds();
  const ChildResult r = run_child({"/bin/sleep", "30"}, {}, 0.3);
  CHECK(r.timed_out);
  CHECK(r.exit_code == -9);
  CHECK(monotonic_seconds() - start < 5);
}

TEST_CASE("wait_for returns as soon as the child exits, with its status and output") {
  const ChildResult r = run_child({"/bin/sh", "-c", "echo hello; exit 3"}, {}, 30);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "hello\n");
  CHECK(r.seconds < 5);
}

TEST_CASE("a child seen to exit keeps its run time, however late the wait") {
  Child c({"/bin/sh", "-c", "exit 0"}, {});
  while (!c.exited()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const ChildResult r = c.wait();
  CHECK(r.exit_code == 0);
  CHECK(r.seconds < 0.9);
}
