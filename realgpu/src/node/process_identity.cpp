#include "gpuslice/realgpu/process_identity.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuslice::realgpu {

std::optional<std::uint64_t> running_start_time(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[1024];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buffer[n] = '\0';
  // The command name (field 2) may hold spaces and ')', so fields are
  // counted from the last ')'. After it: " S ppid ..." where S is field 3.
  const char* p = std::strrchr(buffer, ')');
  if (p == nullptr || p[1] != ' ') return std::nullopt;
  p += 2;
  // A zombie has exited: its GPU memory is gone on a real machine too.
  if (*p == 'Z' || *p == 'X' || *p == 'x') return std::nullopt;
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return std::nullopt;
    ++p;
  }
  char* end = nullptr;
  const unsigned long long start = std::strtoull(p, &end, 10);
  if (end == p) return std::nullopt;
  return start;
}

ProcessId self_process() {
  // Cached per pid: /proc is read once per process, again after fork.
  static thread_local ProcessId cached;
  const pid_t pid = ::getpid();
  if (cached.pid != pid) {
    cached.pid = pid;
    cached.start_time = running_start_time(pid).value_or(0);
  }
  return cached;
}

bool is_alive(const ProcessId& process) {
  if (process.pid <= 0) return false;
  if (process.start_time == 0) return ::kill(process.pid, 0) == 0 || errno == EPERM;
  const std::optional<std::uint64_t> start = running_start_time(process.pid);
  return start && *start == process.start_time;
}

}  // namespace gpuslice::realgpu
