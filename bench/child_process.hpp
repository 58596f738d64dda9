// A command run as a child process, timed as a shell's `time` would: its
// wall time and the kernel's account of its CPU (user + system) and peak
// memory, from wait4. The benchmarks that time a whole command use it.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "measure.hpp"

namespace gpuslice::bench {

// Starts argv[0] (looked up in PATH) with stdout to stdout_path (empty:
// this process's) and stderr to stderr_path.
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path) {
  std::fflush(stdout);  // or the child writes our buffered lines again
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (!stdout_path.empty()) {
      if (!std::freopen(stdout_path.c_str(), "w", stdout)) _exit(126);
    }
    if (!std::freopen(stderr_path.c_str(), "w", stderr)) _exit(126);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

struct ChildFigures {
  double wall_s = 0;
  double cpu_s = 0;  // user + system: what the run cost on a busy machine
  double peak_mib = 0;
  int status = 0;  // its exit status, or 128 + the signal that ended it
};

// Runs the command to its end.
inline ChildFigures run_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                              const std::string& stderr_path) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawn(argv, stdout_path, stderr_path);
  int status = 0;
  rusage u{};
  wait4(pid, &status, 0, &u);
  ChildFigures f;
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.cpu_s = cpu_seconds(u);
  f.peak_mib = static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return f;
}

}  // namespace gpuslice::bench
