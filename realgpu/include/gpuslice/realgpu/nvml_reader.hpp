// NVML as the gpuslice process itself sees it: outside every slice, never
// through the shim (a monitoring agent's view, like nvidia-smi or DCGM on
// the host). The labs sample device utilisation with it while a slice runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace gpuslice::realgpu {

class NvmlReader {
 public:
  // Opens `library` (a path, or the soname "libnvidia-ml.so.1"). Throws
  // std::runtime_error saying why it cannot.
  explicit NvmlReader(const std::string& library);
  ~NvmlReader();
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;

  // (Re)initialises NVML with `settings` in the environment for the call
  // (the fake driver reads its fleet and state folder there; they are put
  // back afterwards, so nothing leaks to the children). Throws on failure.
  void initialise(const std::map<std::string, std::string>& settings = {});

  std::string driver_version() const;
  struct Device {
    std::string name, uuid;
    uint64_t total_bytes = 0, used_bytes = 0;
  };
  // The device with this UUID ("GPU-..."), or the first one when `uuid` is
  // empty; nullopt when NVML does not know it.
  std::optional<Device> device(const std::string& uuid) const;
  // Percent of the last sample period during which a kernel ran, device-wide
  // (nvidia-smi's utilization.gpu); nullopt when NVML cannot say.
  std::optional<unsigned> utilization(const std::string& uuid) const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;  // the library itself is never unloaded
};

}  // namespace gpuslice::realgpu
