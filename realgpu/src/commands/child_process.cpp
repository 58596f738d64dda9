#include "gpuslice/realgpu/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "gpuslice/realgpu/clock.hpp"

extern char** environ;

namespace gpuslice::realgpu {

namespace {

std::string temp_file(const char* tag) {
  std::string path = std::string("/tmp/gpuslice-") + tag + "-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0)
    throw std::runtime_error(std::string("cannot create a temporary file: ") + std::strerror(errno));
  close(fd);
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Child::Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env)
    : out_path_(temp_file("out")), err_path_(temp_file("err")) {
  if (argv.empty()) {
    unlink(out_path_.c_str());
    unlink(err_path_.c_str());
    throw std::invalid_argument("cannot start a process without a command");
  }
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) merged[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : env) {
    if (v.empty())
      merged.erase(k);
    else
      merged[k] = v;
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path_.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path_.c_str(), O_WRONLY | O_TRUNC, 0);
  started_ = monotonic_seconds();
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    unlink(out_path_.c_str());
    unlink(err_path_.c_str());
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
}

Child::~Child() {
  if (!waited_) {
    kill_hard();
    wait();
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

std::optional<std::string> Child::first_line(double timeout_seconds) {
  const double deadline = monotonic_seconds() + timeout_seconds;
  while (monotonic_seconds() < deadline) {
    const std::string out = slurp(out_path_);
    const auto nl = out.find('\n');
    if (nl != std::string::npos) return out.substr(0, nl);
    if (exited()) {
      // Exited without a line: let wait() report it.
      const std::string last = slurp(out_path_);
      const auto n2 = last.find('\n');
      if (n2 != std::string::npos) return last.substr(0, n2);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

ChildResult Child::wait() {
  ChildResult r;
  if (!waited_) {
    waitpid(pid_, &status_, 0);
    waited_ = true;
    ended_ = monotonic_seconds();
  }
  r.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : (WIFSIGNALED(status_) ? -WTERMSIG(status_) : -1);
  r.seconds = ended_ - started_;
  r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

ChildResult Child::wait_for(double timeout_seconds) {
  bool killed = false;
  if (timeout_seconds > 0) {
    const double deadline = started_ + timeout_seconds;
    while (!exited() && monotonic_seconds() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!waited_) {
      kill_hard();
      killed = true;
    }
  }
  ChildResult r = wait();
  r.timed_out = killed;
  return r;
}

bool Child::exited() {
  if (!waited_ && waitpid(pid_, &status_, WNOHANG) == pid_) {
    waited_ = true;
    ended_ = monotonic_seconds();
  }
  return waited_;
}

void Child::kill_hard() {
  if (!waited_ && pid_ > 0) ::kill(pid_, SIGKILL);
}

std::string lines_containing(const std::string& text, std::string_view needle) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) out += line + "\n";
  return out;
}

ChildResult run_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                      double timeout_seconds) {
  Child c(argv, env);
  return c.wait_for(timeout_seconds);
}

}  // namespace gpuslice::realgpu
