// The fake fleet: which GPUs the fake driver pretends to have, parsed from
// GPUSLICE_FAKE_GPUS, and the identities (UUIDs) both fake libraries derive
// from it. Both libraries must agree on every byte here, because the shim
// pairs CUDA devices with NVML devices by UUID.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/realgpu/uuid_text.hpp"

namespace gpuslice::fake {

inline constexpr const char* kFleetVariable = "GPUSLICE_FAKE_GPUS";
inline constexpr const char* kDefaultFleet = "NVIDIA H100 80GB HBM3:81559:132";
// Fixed bounds keep the shared state file a fixed-layout POD.
inline constexpr std::size_t kMaxDevices = 16;
// NVML's name buffer is 64 bytes including the terminator.
inline constexpr std::size_t kMaxNameLength = 63;

struct DeviceSpec {
  std::string name;
  std::uint64_t memory_mib = 0;
  std::uint32_t sm_count = 0;

  std::uint64_t memory_bytes() const { return memory_mib << 20; }
};

// Either the devices or, when the text is malformed, one line saying which
// entry and which field is wrong (never a guess at what was meant).
struct FleetParse {
  std::vector<DeviceSpec> devices;
  std::string error;
  bool ok() const { return error.empty(); }
};

// `name:MiB:SMs[;name:MiB:SMs...]`, exactly: no empty entries, no blanks
// around numbers, 1..kMaxDevices devices.
FleetParse parse_fleet(std::string_view text);

using Uuid = realgpu::DeviceUuid;  // written as text by realgpu::uuid_text

// Deterministic in (physical index, name), so every process and both
// libraries compute the same identity without sharing anything.
Uuid device_uuid(std::size_t index, std::string_view name);

// FNV-1a, 64 bit: names the state file after the fleet text.
std::uint64_t fnv1a64(std::string_view text, std::uint64_t seed = 0xcbf29ce484222325ULL);

}  // namespace gpuslice::fake
