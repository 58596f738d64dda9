#include "gpuslice/realgpu/node_files.hpp"

#include <sys/stat.h>

#include <map>

#include "gpuslice/realgpu/slice_region.hpp"

namespace gpuslice::realgpu {

NodeFiles::NodeFiles(std::string hook_path, bool writable)
    : hook_path_(std::move(hook_path)), writable_(writable) {}

std::vector<const NodeFiles::Entry*> NodeFiles::rescan() {
  std::map<std::string, Entry> old;
  for (auto& e : entries_) old.emplace(e.dir.name, std::move(e));
  entries_.clear();
  std::vector<std::string> newly_failing;
  for (auto& d : scan_container_dirs(hook_path_)) {
    Entry e;
    const auto it = old.find(d.name);
    std::string previous_problem = it == old.end() ? "" : it->second.problem;
    if (!d.problem.empty()) {
      e.problem = d.problem;
    } else if (!d.cache_file.empty()) {
      // Keep the mapping while the path still names the same file.
      struct stat st {};
      const bool same = it != old.end() && it->second.file && it->second.file->path() == d.cache_file &&
                        stat(d.cache_file.c_str(), &st) == 0 && st.st_ino == it->second.file->inode() &&
                        st.st_dev == it->second.file->device_id();
      if (same) {
        e.file = std::move(it->second.file);
      } else {
        try {
          e.file = std::make_unique<RegionFile>(d.cache_file, writable_);
        } catch (const RegionError& err) {
          e.problem = err.what();
        }
      }
    }
    e.dir = std::move(d);
    if (!e.problem.empty() && e.problem != previous_problem) newly_failing.push_back(e.dir.name);
    entries_.push_back(std::move(e));
  }
  std::vector<const Entry*> out;
  for (const auto& name : newly_failing)
    for (const auto& e : entries_)
      if (e.dir.name == name) out.push_back(&e);
  return out;
}

FeedbackOutcome NodeFiles::feedback() {
  std::vector<FeedbackTarget*> targets;
  for (auto& e : entries_)
    if (e.file) targets.push_back(e.file.get());
  return observe(targets);
}

}  // namespace gpuslice::realgpu
