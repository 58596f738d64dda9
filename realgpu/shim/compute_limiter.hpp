// Holds each device at the slice's compute share (CUDA_DEVICE_SM_LIMIT):
// every launch passes a per-device gate whose rate a background thread
// steers from NVML's per-process utilization (see share_controller.hpp).
// GPU_CORE_UTILIZATION_POLICY: force = always, disable = never, default =
// only while a process outside the slice uses the card (alone, a slice may
// use the whole card).
#pragma once

namespace gpuslice::shim {

class ComputeLimiter {
 public:
  static ComputeLimiter& get();
  // Called before every launch on the current device.
  void admit();

 private:
  ComputeLimiter();
  struct Impl;
  Impl* impl_;
};

}  // namespace gpuslice::shim
