#include "gpuslice/realgpu/container_dirs.hpp"

#include <algorithm>
#include <filesystem>

namespace gpuslice::realgpu {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void find_cache_file(ContainerDir& d) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d.path, ec)) names.push_back(e.path().filename().string());
  if (ec) {
    d.problem = "cannot list: " + ec.message();
    return;
  }
  std::sort(names.begin(), names.end());  // os.ReadDir's order
  size_t matched = 0;
  for (const auto& n : names) matched += n.find("libvgpu.so") != std::string::npos || ends_with(n, ".cache");
  if (matched > 2) {
    d.problem = "cache num not matched (" + std::to_string(matched) + " *.cache and libvgpu.so files)";
    return;
  }
  for (const auto& n : names)
    if (n.find("libvgpu.so") == std::string::npos && ends_with(n, ".cache")) {
      d.cache_file = (fs::path(d.path) / n).string();
      return;
    }
}

}  // namespace

std::string container_dir_path(const std::string& hook_path, const std::string& pod_uid,
                               const std::string& container) {
  return (fs::path(hook_path) / "containers" / (pod_uid + "_" + container)).string();
}

std::vector<ContainerDir> scan_container_dirs(const std::string& hook_path) {
  std::vector<ContainerDir> out;
  std::error_code ec;
  const fs::path root = fs::path(hook_path) / "containers";
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::error_code type_ec;
    if (!e.is_directory(type_ec)) continue;
    ContainerDir d;
    d.name = e.path().filename().string();
    d.path = e.path().string();
    const size_t cut = d.name.find('_');
    if (cut == std::string::npos || cut == 0 || cut + 1 == d.name.size()) {
      d.problem = "unexpected folder name (not <pod UID>_<container>)";
    } else {
      d.pod_uid = d.name.substr(0, cut);
      d.container = d.name.substr(cut + 1);
      find_cache_file(d);
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace gpuslice::realgpu
