#include "gpuslice/realgpu/toolkit.hpp"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "gpuslice/realgpu/child_process.hpp"
#include "gpuslice/realgpu/container_dirs.hpp"

namespace gpuslice::realgpu {

namespace fs = std::filesystem;

namespace {
fs::path own_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

std::string must_exist(const fs::path& p, const char* what) {
  if (!fs::exists(p))
    throw std::runtime_error(std::string(what) + " not found at " + p.string() +
                             " (build it: cmake --build build)");
  return p.string();
}

bool real_driver_loads() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return h != nullptr;
}
bool real_driver_works(const std::string& probe) {
  if (!real_driver_loads()) return false;
  Toolkit real;
  real.driver = "real";
  const ChildResult r = run_child({probe, "info"}, driver_environment(real));
  return r.exit_code == 0;
}
}  // namespace

Toolkit locate_toolkit(DriverChoice choice) {
  const fs::path bin = own_directory();
  Toolkit t;
  t.probe = must_exist(bin / "gpuslice-probe", "the probe (gpuslice-probe)");
  t.shim = must_exist(bin.parent_path() / "lib" / "libgpuslice_shim.so", "the shim (libgpuslice_shim.so)");
  const fs::path fake = bin.parent_path() / "lib" / "fakecuda";
  // Auto takes the real driver only when it loads AND answers (a machine
  // with the driver library but no usable GPU gets the fake).
  if (choice == DriverChoice::Real || (choice == DriverChoice::Auto && real_driver_works(t.probe))) {
    if (choice == DriverChoice::Real && !real_driver_loads())
      throw std::runtime_error("--driver real: libcuda.so.1 cannot be loaded on this machine");
    t.driver = "real";
  } else {
    t.fake_dir = must_exist(fake, "the fake driver (lib/fakecuda)");
    must_exist(fake / "libcuda.so.1", "the fake driver's libcuda.so.1");
    t.driver = "fake";
  }
  std::string scratch = (fs::temp_directory_path() / "gpuslice-realgpu-XXXXXX").string();
  if (!mkdtemp(scratch.data())) throw std::runtime_error("cannot create a scratch folder in /tmp");
  t.scratch = scratch;
  return t;
}

std::map<std::string, std::string> driver_environment(const Toolkit& t) {
  std::map<std::string, std::string> env;
  for (const char* v :
       {"LD_PRELOAD", "CUDA_DEVICE_MEMORY_LIMIT", "CUDA_DEVICE_SM_LIMIT", "GPU_CORE_UTILIZATION_POLICY",
        "CUDA_DEVICE_MEMORY_SHARED_CACHE", "CUDA_VISIBLE_DEVICES", "CUDA_TASK_PRIORITY"})
    env[v] = "";
  for (int i = 0; i < 16; ++i) {
    env["CUDA_DEVICE_MEMORY_LIMIT_" + std::to_string(i)] = "";
    env["CUDA_DEVICE_SM_LIMIT_" + std::to_string(i)] = "";
  }
  if (t.driver == "fake") {
    const char* old = getenv("LD_LIBRARY_PATH");
    env["LD_LIBRARY_PATH"] = t.fake_dir + (old && *old ? std::string(":") + old : "");
    env["GPUSLICE_FAKE_STATE_DIR"] = t.scratch;
    for (const auto& [name, value] : t.fake_settings) env[name] = value;
  }
  return env;
}

std::string host_nvml_library(const Toolkit& t) {
  return t.driver == "fake" ? t.fake_dir + "/libnvidia-ml.so.1" : "libnvidia-ml.so.1";
}

std::map<std::string, std::string> host_nvml_settings(const Toolkit& t, unsigned fake_window_ms) {
  if (t.driver != "fake") return {};
  auto settings = driver_environment(t);
  settings["GPUSLICE_FAKE_UTIL_WINDOW_MS"] = std::to_string(fake_window_ms);
  return settings;
}

namespace {
// A UUID-shaped name for `seed` (two FNV-1a 64 hashes): pod UIDs and cache
// file names stay the same for the same slice name, like the device
// plugin's random ones in shape only.
std::string uuid_shaped(const std::string& seed) {
  auto fnv = [&](uint64_t h) {
    for (unsigned char c : seed) h = (h ^ c) * 1099511628211ULL;
    return h;
  };
  const uint64_t a = fnv(14695981039346656037ULL), b = fnv(0x9e3779b97f4a7c15ULL);
  char out[40];
  std::snprintf(out, sizeof out, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(a >> 32), static_cast<unsigned long long>((a >> 16) & 0xffff),
                static_cast<unsigned long long>(a & 0xffff), static_cast<unsigned long long>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return out;
}
}  // namespace

std::string pod_uid_for(const std::string& slice_name) { return uuid_shaped("pod/" + slice_name); }

std::string slice_cache_path(const Toolkit& t, const std::string& slice_name) {
  const std::string dir = container_dir_path(t.hook_path(), pod_uid_for(slice_name), kSliceContainer);
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::permissions(dir, fs::perms::all, ec);
  return dir + "/" + uuid_shaped("cache/" + slice_name) + ".cache";
}

std::map<std::string, std::string> slice_environment(const Toolkit& t, const SliceSpec& s) {
  auto env = driver_environment(t);
  env["LD_PRELOAD"] = t.shim;
  env["CUDA_DEVICE_MEMORY_SHARED_CACHE"] = slice_cache_path(t, s.name);
  if (s.priority >= 0) env["CUDA_TASK_PRIORITY"] = std::to_string(s.priority);
  if (s.memory_mib > 0) env["CUDA_DEVICE_MEMORY_LIMIT_0"] = std::to_string(s.memory_mib) + "m";
  if (s.cores > 0) env["CUDA_DEVICE_SM_LIMIT"] = std::to_string(s.cores);
  env["GPU_CORE_UTILIZATION_POLICY"] = s.policy;
  if (!s.visible_devices.empty()) env["CUDA_VISIBLE_DEVICES"] = s.visible_devices;
  return env;
}

}  // namespace gpuslice::realgpu
