// The NVML entry points. Memory figures are card-wide and include context
// footprints; utilisation is computed from the shared kernel timeline.
//
// Clock: every time stamp (nvmlProcessUtilizationSample_t::timeStamp,
// lastSeenTimeStamp) is CLOCK_MONOTONIC in microseconds, not wall-clock
// time as on the real NVML; callers should only feed back values the fake
// gave them, or 0.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <vector>

#include "clock.hpp"
#include "ledger.hpp"
#include "nvml_library.hpp"
#include "timeline.hpp"

using gpuslice::fake::Nvml;
using gpuslice::fake::nvml;

namespace {

constexpr const char* kDriverVersion = "580.00 (gpuslice fake)";
// What the real NVML reports for the instance ids of a non-MIG GPU.
constexpr unsigned int kNoInstance = 0xFFFFFFFFu;

unsigned int percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return 0;
  const std::int64_t rounded = (part * 100 + whole / 2) / whole;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(rounded, 0, 100));
}

// Case-insensitive: "GPU-" and the hex digits may come in either case.
bool same_uuid(const char* given, const std::string& ours) {
  if (std::strlen(given) != ours.size()) return false;
  for (std::size_t i = 0; i < ours.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(given[i])) !=
        std::tolower(static_cast<unsigned char>(ours[i])))
      return false;
  return true;
}

nvmlReturn_t memory(nvmlDevice_t device, unsigned long long& total, unsigned long long& used) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  gpuslice::fake::SharedState::Guard guard = n.state->lock();
  if (!guard) return NVML_ERROR_UNKNOWN;
  gpuslice::fake::ledger::reap_dead(*guard);
  total = guard->devices[index].total_bytes;
  used = std::min<unsigned long long>(total, gpuslice::fake::ledger::used_bytes(*guard, index));
  return NVML_SUCCESS;
}

}  // namespace

extern "C" nvmlReturn_t nvmlInit_v2(void) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  return n.initialise();
}

extern "C" nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

extern "C" nvmlReturn_t nvmlShutdown(void) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  return n.shutdown();
}

extern "C" const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument Version Mismatch";
    default:
      return "Unknown Error";
  }
}

extern "C" nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  if (const nvmlReturn_t rc = n.require_initialised(); rc != NVML_SUCCESS) return rc;
  return gpuslice::fake::copy_out(kDriverVersion, version, length);
}

extern "C" nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  if (const nvmlReturn_t rc = n.require_initialised(); rc != NVML_SUCCESS) return rc;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned int>(n.fleet.size());
  return NVML_SUCCESS;
}

extern "C" nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return nvmlDeviceGetCount_v2(count); }

extern "C" nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  if (const nvmlReturn_t rc = n.require_initialised(); rc != NVML_SUCCESS) return rc;
  if (device == nullptr || index >= n.fleet.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = n.handle(index);
  return NVML_SUCCESS;
}

extern "C" nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

extern "C" nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  if (const nvmlReturn_t rc = n.require_initialised(); rc != NVML_SUCCESS) return rc;
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (std::size_t i = 0; i < n.fleet.size(); ++i) {
    if (same_uuid(uuid, gpuslice::realgpu::uuid_text(gpuslice::fake::device_uuid(i, n.fleet[i].name)))) {
      *device = n.handle(i);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

extern "C" nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t physical = 0;
  if (const nvmlReturn_t rc = n.device(device, physical); rc != NVML_SUCCESS) return rc;
  if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *index = static_cast<unsigned int>(physical);
  return NVML_SUCCESS;
}

extern "C" nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  return gpuslice::fake::copy_out(n.fleet[index].name, name, length);
}

extern "C" nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  return gpuslice::fake::copy_out(
      gpuslice::realgpu::uuid_text(gpuslice::fake::device_uuid(index, n.fleet[index].name)), uuid, length);
}

extern "C" nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory_out) {
  if (memory_out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long total = 0;
  unsigned long long used = 0;
  if (const nvmlReturn_t rc = memory(device, total, used); rc != NVML_SUCCESS) return rc;
  memory_out->total = total;
  memory_out->used = used;
  memory_out->free = total - used;
  return NVML_SUCCESS;
}

extern "C" nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory_out) {
  if (memory_out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory_out->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  unsigned long long total = 0;
  unsigned long long used = 0;
  if (const nvmlReturn_t rc = memory(device, total, used); rc != NVML_SUCCESS) return rc;
  memory_out->total = total;
  memory_out->reserved = 0;  // the fake keeps nothing back for the driver
  memory_out->used = used;
  memory_out->free = total - used;
  return NVML_SUCCESS;
}

// gpu: share of the last GPUSLICE_FAKE_UTIL_WINDOW_MS (default 200 ms)
// during which a kernel ran, rounded; memory: always 0 (nothing is copied).
extern "C" nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  gpuslice::fake::SharedState::Guard guard = n.state->lock();
  if (!guard) return NVML_ERROR_UNKNOWN;
  const std::int64_t now = gpuslice::fake::monotonic_ns();
  const std::int64_t busy = gpuslice::fake::timeline::busy_ns(*guard, index, now - n.window_ns, now);
  utilization->gpu = percent(busy, n.window_ns);
  utilization->memory = 0;
  return NVML_SUCCESS;
}

// GPUSLICE_FAKE_UTIL_ATTRIBUTION=time-sliced: an H100 with driver 580
// time-slicing two contexts gives each sampling period one sample, to one
// process, reading the whole device's busy share (two spinning processes:
// every period 93-99 % to one or the other; two held to 30 %: each period
// ~60 % to one of them; docs/gpu-runs/h100-2026-11-26). Which process: drawn
// in proportion to its busy time in the period, from a hash of the period and
// device, so that the mean over many periods is each one's true share and a
// rerun reads the same.
namespace {
std::optional<nvmlProcessUtilizationSample_t> time_sliced_sample(
    const std::vector<gpuslice::fake::timeline::ProcessBusy>& busy, std::size_t device, std::int64_t end,
    std::int64_t period) {
  std::int64_t total = 0;
  for (const auto& b : busy) total += std::max<std::int64_t>(0, b.busy_ns);
  if (total <= 0) return std::nullopt;
  std::uint64_t h = 14695981039346656037ULL;
  for (const std::uint64_t v : {static_cast<std::uint64_t>(end / period), static_cast<std::uint64_t>(device)})
    for (int byte = 0; byte < 8; ++byte) h = (h ^ ((v >> (8 * byte)) & 0xff)) * 1099511628211ULL;
  std::int64_t pick = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(total));
  for (const auto& b : busy) {
    pick -= std::max<std::int64_t>(0, b.busy_ns);
    if (pick < 0)
      return nvmlProcessUtilizationSample_t{static_cast<unsigned int>(b.pid),
                                            static_cast<unsigned long long>(end / 1000),
                                            percent(std::min(total, period), period),
                                            0,
                                            0,
                                            0};
  }
  return std::nullopt;
}
}  // namespace

// As the real NVML samples (seen on an H100, driver 580): the driver keeps
// one sample per sampling period (GPUSLICE_FAKE_UTIL_WINDOW_MS, 200 ms as on
// that card) and per process that ran kernels in that period, stamped with
// the period's end; smUtil is the process's busy share of that period, a
// whole percent (tiny activity reads 0). A period with no kernel of a process
// has no sample of it, so a reader cannot take "mean smUtil x time since my
// last look" for busy time: the samples cover only the periods listed.
// Returned: the completed periods ending after lastSeenTimeStamp (after the
// last five periods when it is 0). Size protocol as NVML: no buffer or too
// small -> INSUFFICIENT_SIZE with the count needed; no sample -> NOT_FOUND.
extern "C" nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                        nvmlProcessUtilizationSample_t* utilization,
                                                        unsigned int* processSamplesCount,
                                                        unsigned long long lastSeenTimeStamp) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  if (processSamplesCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  constexpr std::int64_t kHistoryPeriods = 5;
  const std::int64_t period = n.window_ns;
  const std::int64_t now = gpuslice::fake::monotonic_ns();
  std::int64_t since = now - kHistoryPeriods * period;
  if (lastSeenTimeStamp != 0)
    since = std::max(since, static_cast<std::int64_t>(
                                std::min(lastSeenTimeStamp, static_cast<unsigned long long>(now / 1000))) *
                                1000);
  std::vector<nvmlProcessUtilizationSample_t> samples;
  {
    gpuslice::fake::SharedState::Guard guard = n.state->lock();
    if (!guard) return NVML_ERROR_UNKNOWN;
    for (std::int64_t end = (since / period + 1) * period; end <= now; end += period) {
      auto busy = gpuslice::fake::timeline::busy_by_process(*guard, index, end - period, end);
      std::sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
      if (n.time_sliced) {
        if (const auto one = time_sliced_sample(busy, index, end, period)) samples.push_back(*one);
        continue;
      }
      for (const auto& b : busy)
        if (b.busy_ns > 0)
          samples.push_back({static_cast<unsigned int>(b.pid), static_cast<unsigned long long>(end / 1000),
                             percent(b.busy_ns, period), 0, 0, 0});
    }
  }
  if (samples.empty()) {
    *processSamplesCount = 0;
    return NVML_ERROR_NOT_FOUND;
  }
  const auto needed = static_cast<unsigned int>(samples.size());
  if (utilization == nullptr || *processSamplesCount < needed) {
    *processSamplesCount = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(samples.begin(), samples.end(), utilization);
  *processSamplesCount = needed;
  return NVML_SUCCESS;
}

// Live processes holding memory or a context on the device; usedGpuMemory
// is their allocations plus context footprint.
extern "C" nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                                nvmlProcessInfo_t* infos) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  if (infoCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<gpuslice::fake::ledger::ProcessUse> processes;
  {
    gpuslice::fake::SharedState::Guard guard = n.state->lock();
    if (!guard) return NVML_ERROR_UNKNOWN;
    processes = gpuslice::fake::ledger::running_processes(*guard, index);
  }
  const auto needed = static_cast<unsigned int>(processes.size());
  if (*infoCount < needed || (needed > 0 && infos == nullptr)) {
    *infoCount = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned int i = 0; i < needed; ++i)
    infos[i] = nvmlProcessInfo_t{static_cast<unsigned int>(processes[i].pid), processes[i].bytes, kNoInstance,
                                 kNoInstance};
  *infoCount = needed;
  return NVML_SUCCESS;
}

extern "C" nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int* node) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mutex);
  std::size_t index = 0;
  if (const nvmlReturn_t rc = n.device(device, index); rc != NVML_SUCCESS) return rc;
  if (node == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *node = 0;
  return NVML_SUCCESS;
}
