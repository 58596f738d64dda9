#include "gpuslice/realgpu/file_users.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuslice::realgpu {

bool file_locked_by_user(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // drops the lock if it was taken
  return held;
}

bool while_unused(const std::string& path, const std::function<void()>& action) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool unused = flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (unused) action();
  close(fd);
  return unused;
}

bool process_maps_file(pid_t pid, dev_t device, ino_t inode) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/maps", static_cast<int>(pid));
  FILE* f = std::fopen(path, "re");
  if (!f) return false;
  // "start-end perms offset major:minor inode path" (device numbers in hex).
  char line[4096];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f)) {
    unsigned major = 0, minor = 0;
    unsigned long long ino = 0;
    if (std::sscanf(line, "%*x-%*x %*4s %*x %x:%x %llu", &major, &minor, &ino) == 3)
      found = ino == inode && ino != 0 && makedev(major, minor) == device;
  }
  std::fclose(f);
  return found;
}

std::vector<pid_t> processes_mapping(dev_t device, ino_t inode) {
  std::vector<pid_t> out;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    if (process_maps_file(static_cast<pid_t>(pid), device, inode)) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return out;
}

}  // namespace gpuslice::realgpu
