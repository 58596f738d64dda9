// Holds each device at the slice's compute share (CUDA_DEVICE_SM_LIMIT):
// every launch passes a per-device gate whose rate a background thread
// steers from NVML's per-process utilization (see share_controller.hpp).
// GPU_CORE_UTILIZATION_POLICY: force = always, disable = never, default =
// as the node's monitor decides (HAMi's feedback: utilization_switch = 1
// while a higher-priority task or a peer of the same priority is active on
// the card), or, before any monitor has written the file, only while a
// process outside the slice uses the card (alone, a slice may use it all).
// Every launch also tells the monitor the slice is active (recent_kernel,
// last_kernel_time), and waits while the monitor says a higher-priority
// task has the card (recent_kernel < 0).
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
