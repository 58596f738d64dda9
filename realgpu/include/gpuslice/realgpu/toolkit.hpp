// Where the realgpu pieces are: the probe, the shim and the fake driver sit
// beside the gpuslice binary (build/bin, build/lib, build/lib/fakecuda), and
// which driver the children will use.
#pragma once

#include <map>
#include <string>

namespace gpuslice::realgpu {

enum class DriverChoice { Auto, Fake, Real };

struct Toolkit {
  std::string probe;     // gpuslice-probe
  std::string shim;      // libgpuslice_shim.so
  std::string fake_dir;  // holds the fake libcuda.so.1 / libnvidia-ml.so.1
  std::string driver;    // "real" or "fake", once chosen
  std::string scratch;   // a fresh folder for slice files and the fake's state
  // The fake driver's own settings for every child (GPUSLICE_FAKE_GPUS,
  // GPUSLICE_FAKE_CONTEXT_MIB, ...): which cards it models. Unused on a real driver.
  std::map<std::string, std::string> fake_settings;
};

// Finds the pieces next to this executable and picks the driver: Auto takes
// the real one when libcuda.so.1 loads, the fake one otherwise. Throws
// std::runtime_error naming what is missing.
Toolkit locate_toolkit(DriverChoice choice);

// The environment every child gets: the chosen driver, no slice variables
// inherited from the caller (a value "" removes a variable).
std::map<std::string, std::string> driver_environment(const Toolkit& t);

// A slice as HAMi's device plugin injects it, plus the shim preloaded.
struct SliceSpec {
  std::string name;         // names the slice's shared accounting file
  uint64_t memory_mib = 0;  // 0 = no memory limit
  int cores = 0;            // percent; 0 = no compute limit
  std::string policy = "default";
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES, "" = unchanged
};
std::map<std::string, std::string> slice_environment(const Toolkit& t, const SliceSpec& s);

}  // namespace gpuslice::realgpu
