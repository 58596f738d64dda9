#include "gpuslice/cli/memory_guard.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpuslice::cli {

namespace {
namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A file holding one number ("max", or a v1 limit near 2^63: no limit).
std::optional<uint64_t> read_number(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  try {
    size_t used = 0;
    const unsigned long long v = std::stoull(*text, &used);
    if (v >= (1ULL << 62)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;  // "max"
  }
}

// "Name:   1234 kB" in /proc/meminfo or /proc/self/status, in bytes.
std::optional<uint64_t> kib_field(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + ":");
  const size_t start = text.rfind(name + ":", 0) == 0 ? 0 : (at == std::string::npos ? at : at + 1);
  if (start == std::string::npos) return std::nullopt;
  try {
    return std::stoull(text.substr(start + name.size() + 1)) * 1024;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<uint64_t> rlimit(int resource) {
  struct rlimit r {};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(r.rlim_cur);
}

// The tightest (limit - use) over the process's memory cgroup and its
// parents: a parent's limit binds its children too.
void read_cgroup(MemoryFacts& facts) {
  const auto self = read_text("/proc/self/cgroup");
  if (!self) return;
  std::istringstream lines(*self);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    const bool v2 = line.substr(0, a) == "0" && controllers.empty();
    bool v1_memory = false;
    std::istringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) v1_memory = v1_memory || c == "memory";
    if (!v2 && !v1_memory) continue;
    const fs::path root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const char* limit_name = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char* use_name = v2 ? "memory.current" : "memory.usage_in_bytes";
    // In a cgroup namespace the path may not exist under the mount: the
    // mount's root is then the process's own cgroup.
    std::vector<fs::path> dirs;
    for (fs::path p = fs::path(path).relative_path(); !p.empty(); p = p.parent_path())
      dirs.push_back(root / p);
    dirs.push_back(root);
    for (const auto& dir : dirs) {
      const auto limit = read_number(dir / limit_name);
      const auto use = read_number(dir / use_name);
      if (!limit || !use) continue;
      const uint64_t room = *limit > *use ? *limit - *use : 0;
      if (!facts.cgroup_limit || room < *facts.cgroup_limit - *facts.cgroup_used) {
        facts.cgroup_limit = limit;
        facts.cgroup_used = use;
        facts.cgroup_file = (dir / limit_name).string();
      }
    }
  }
}

MemoryFacts read_facts() {
  MemoryFacts facts;
  if (const auto meminfo = read_text("/proc/meminfo"))
    facts.mem_available = kib_field(*meminfo, "MemAvailable");
  const auto status = read_text("/proc/self/status");
  facts.rlimit_as = rlimit(RLIMIT_AS);
  facts.rlimit_data = rlimit(RLIMIT_DATA);
  if (status) {
    facts.address_space_used = kib_field(*status, "VmSize");
    facts.data_used = kib_field(*status, "VmData");
  }
  read_cgroup(facts);
  return facts;
}

uint64_t left(uint64_t limit, std::optional<uint64_t> used) {
  const uint64_t u = used.value_or(0);
  return limit > u ? limit - u : 0;
}
}  // namespace

MemoryRoom memory_room_of(const MemoryFacts& f) {
  MemoryRoom room;
  auto consider = [&room](uint64_t bytes, const std::string& limit) {
    if (bytes < room.bytes) room = {bytes, limit};
  };
  if (f.mem_available) consider(*f.mem_available, "the machine's available memory (MemAvailable)");
  if (f.rlimit_as)
    consider(left(*f.rlimit_as, f.address_space_used), "the address-space limit (RLIMIT_AS, ulimit -v)");
  if (f.rlimit_data) consider(left(*f.rlimit_data, f.data_used), "the data limit (RLIMIT_DATA, ulimit -d)");
  if (f.cgroup_limit)
    consider(left(*f.cgroup_limit, f.cgroup_used), "the cgroup's limit (" + f.cgroup_file + ")");
  return room;
}

MemoryRoom memory_room() { return memory_room_of(read_facts()); }

std::string size_text(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.0f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.0f} KiB", b / 1024.0);
}

MemoryLimitError::MemoryLimitError(const std::string& what_runs, uint64_t estimate, const MemoryRoom& room,
                                   const std::string& how_to_lower)
    : core::InputError(
          "memory guard", 0, "",
          fmt::format("{} needs about {}, but {} leaves {}; refused before it starts (lower it: {})",
                      what_runs, size_text(estimate), room.limit, size_text(room.bytes), how_to_lower)),
      estimate_(estimate),
      limit_(room.bytes) {}

void guard_memory(const std::string& what_runs, uint64_t estimate, const std::string& how_to_lower,
                  const MemoryRoom& room) {
  if (estimate > room.bytes) throw MemoryLimitError(what_runs, estimate, room, how_to_lower);
}

}  // namespace gpuslice::cli
