#include "gpuslice/monitor/host_gpus.hpp"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "gpuslice/realgpu/nvml_abi.h"

namespace gpuslice::monitor {

namespace {

class Nvml final : public HostGpus {
 public:
  Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      problem_ = std::string("cannot open NVML: ") + dlerror();
      return;
    }
    bool all = bind(init_, "nvmlInit_v2") && bind(count_, "nvmlDeviceGetCount_v2") &&
               bind(by_index_, "nvmlDeviceGetHandleByIndex_v2") &&
               bind(by_uuid_, "nvmlDeviceGetHandleByUUID") && bind(uuid_, "nvmlDeviceGetUUID") &&
               bind(name_, "nvmlDeviceGetName") && bind(memory_, "nvmlDeviceGetMemoryInfo") &&
               bind(rates_, "nvmlDeviceGetUtilizationRates") &&
               bind(process_util_, "nvmlDeviceGetProcessUtilization");
    if (!all) return;
    if (const nvmlReturn_t rc = init_(); rc != NVML_SUCCESS)
      problem_ = "nvmlInit_v2 failed (" + std::to_string(rc) + ")";
  }
  std::string problem() const override { return problem_; }

  std::vector<HostGpu> list() override {
    std::vector<HostGpu> out;
    if (!problem_.empty()) return out;
    std::lock_guard lock(mutex_);
    unsigned n = 0;
    if (count_(&n) != NVML_SUCCESS) return out;
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice_t d{};
      char uuid[96] = {}, name[96] = {};
      if (by_index_(i, &d) != NVML_SUCCESS || uuid_(d, uuid, sizeof uuid) != NVML_SUCCESS ||
          name_(d, name, sizeof name) != NVML_SUCCESS)
        continue;  // HAMi skips a card it cannot describe
      HostGpu g;
      g.index = i;
      g.uuid = uuid;
      g.name = name;
      nvmlMemory_t m{};
      const nvmlReturn_t mrc = memory_(d, &m);
      if (mrc == NVML_SUCCESS) {
        g.memory_known = true;
        g.memory_used = m.used;
      } else if (mrc != NVML_ERROR_NOT_SUPPORTED) {
        continue;  // as HAMi: only "not supported" (unified memory) lets the card's other figures through
      }
      nvmlUtilization_t u{};
      if (rates_(d, &u) == NVML_SUCCESS) {
        g.utilization_known = true;
        g.gpu_percent = u.gpu;
        g.memory_percent = u.memory;
      }
      out.push_back(std::move(g));
    }
    return out;
  }

  std::map<unsigned, unsigned> process_utilization(const std::string& uuid) override {
    std::map<unsigned, unsigned> out;
    if (!problem_.empty()) return out;
    std::lock_guard lock(mutex_);
    nvmlDevice_t d{};
    if (by_uuid_(uuid.c_str(), &d) != NVML_SUCCESS) return out;
    std::vector<nvmlProcessUtilizationSample_t> samples(64);
    unsigned count = static_cast<unsigned>(samples.size());
    unsigned long long& since = last_seen_[uuid];
    nvmlReturn_t rc = process_util_(d, samples.data(), &count, since);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      samples.resize(count + 16);
      count = static_cast<unsigned>(samples.size());
      rc = process_util_(d, samples.data(), &count, since);
    }
    if (rc != NVML_SUCCESS) return out;
    std::map<unsigned, std::pair<unsigned, unsigned>> sums;  // pid -> (sum, samples)
    for (unsigned i = 0; i < count; ++i) {
      since = std::max(since, samples[i].timeStamp);
      auto& [sum, n] = sums[samples[i].pid];
      sum += samples[i].smUtil;
      ++n;
    }
    for (const auto& [pid, s] : sums) out[pid] = s.first / s.second;
    return out;
  }

 private:
  template <class F>
  bool bind(F& slot, const char* symbol) {
    slot = reinterpret_cast<F>(dlsym(lib_, symbol));
    if (!slot && problem_.empty()) problem_ = std::string("NVML lacks ") + symbol;
    return slot != nullptr;
  }

  void* lib_ = nullptr;
  std::string problem_;
  std::mutex mutex_;
  std::map<std::string, unsigned long long> last_seen_;
  decltype(&nvmlInit_v2) init_ = nullptr;
  decltype(&nvmlDeviceGetCount_v2) count_ = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) by_index_ = nullptr;
  decltype(&nvmlDeviceGetHandleByUUID) by_uuid_ = nullptr;
  decltype(&nvmlDeviceGetUUID) uuid_ = nullptr;
  decltype(&nvmlDeviceGetName) name_ = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo) memory_ = nullptr;
  decltype(&nvmlDeviceGetUtilizationRates) rates_ = nullptr;
  decltype(&nvmlDeviceGetProcessUtilization) process_util_ = nullptr;
};

}  // namespace

std::unique_ptr<HostGpus> open_nvml() { return std::make_unique<Nvml>(); }

}  // namespace gpuslice::monitor
