// Runs helper processes (the probe, a pod's command) with an environment of
// our choosing, capturing what they print into files so nothing blocks.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::realgpu {

struct ChildResult {
  int exit_code = -1;  // -signal when killed
  std::string out, err;
  double seconds = 0;      // from start to when it was seen to exit (poll with exited() to see it promptly)
  bool timed_out = false;  // killed by wait_for when its time ran out
};

class Child {
 public:
  // Starts argv[0] (a path) with the current environment plus `env`
  // (a value of "" removes the variable). Throws std::runtime_error.
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // The first line the child printed, once it has (nullopt on timeout or exit).
  std::optional<std::string> first_line(double timeout_seconds);
  ChildResult wait();
  // Waits at most `timeout_seconds` (0: no limit), then kills the child
  // (SIGKILL) and reports it with timed_out set: a hung child never hangs us.
  ChildResult wait_for(double timeout_seconds);
  // True once the child has exited (it is then reaped; wait() reports it).
  bool exited();
  double started_at() const { return started_; }  // monotonic_seconds()
  void kill_hard();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
  double started_ = 0, ended_ = 0;  // ended_: when it was seen to exit
  bool waited_ = false;
  int status_ = 0;
};

// The lines of a child's output that contain `needle` (e.g. the shim's log
// lines, "[gpuslice "), each with its newline.
std::string lines_containing(const std::string& text, std::string_view needle);

// Runs to completion, or for at most `timeout_seconds` (0: no limit; see
// Child::wait_for).
ChildResult run_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                      double timeout_seconds = 0);

}  // namespace gpuslice::realgpu
