// The folders HAMi's device plugin (and Koordinator's koordlet) make for
// each container on the node, <hook path>/containers/<pod UID>_<container>/,
// mounted into the container where CUDA_DEVICE_MEMORY_SHARED_CACHE points.
// Found as HAMi's monitor finds them (pkg/monitor/nvidia/cudevshr.go).
#pragma once

#include <string>
#include <vector>

namespace gpuslice::realgpu {

struct ContainerDir {
  std::string name;  // <pod UID>_<container>
  std::string pod_uid, container;
  std::string path;        // the folder
  std::string cache_file;  // its accounting file; "" when none yet
  std::string problem;     // why the folder is skipped ("" when it is not)
};

// Every folder under `<hook_path>/containers`, in name order. A folder
// whose name is not <uid>_<name> is listed with a problem; one with more
// than two *.cache and libvgpu.so files too ("cache num not matched");
// the accounting file is the first *.cache by name. A missing containers
// folder gives an empty list.
std::vector<ContainerDir> scan_container_dirs(const std::string& hook_path);

// The folder for one container, as the device plugin names it.
std::string container_dir_path(const std::string& hook_path, const std::string& pod_uid,
                               const std::string& container);

}  // namespace gpuslice::realgpu
