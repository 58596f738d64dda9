// Every container accounting file on the node, kept mapped between passes
// as HAMi's monitor keeps them (pkg/monitor/nvidia ContainerLister): a
// rescan maps folders that appeared, drops those that went or were made
// anew, and the feedback pass runs HAMi's rules over all of them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuslice/realgpu/container_dirs.hpp"
#include "gpuslice/realgpu/feedback.hpp"
#include "gpuslice/realgpu/region_file.hpp"

namespace gpuslice::realgpu {

class NodeFiles {
 public:
  // `writable`: map the files read-write (the feedback writes into them).
  NodeFiles(std::string hook_path, bool writable);

  struct Entry {
    ContainerDir dir;
    std::unique_ptr<RegionFile> file;  // null while the folder has no readable file
    std::string problem;               // why not ("" when mapped or simply empty)
  };
  // Rescans <hook path>/containers. Returns the folders whose problem is new
  // since the last rescan (to log once, not every period).
  std::vector<const Entry*> rescan();
  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& hook_path() const { return hook_path_; }

  // HAMi's feedback over every mapped file.
  FeedbackOutcome feedback();

 private:
  std::string hook_path_;
  bool writable_;
  std::vector<Entry> entries_;
};

}  // namespace gpuslice::realgpu
