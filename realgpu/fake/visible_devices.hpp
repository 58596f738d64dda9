// CUDA_VISIBLE_DEVICES as the real driver reads it: a comma list of
// physical indices (or GPU-<uuid> prefixes) that both filters and reorders
// the CUDA ordinals. Like the real driver, the list ends at the first entry
// that is invalid or repeated; an empty value hides every device. NVML never
// looks at it.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "device_table.hpp"

namespace gpuslice::fake {

// CUDA ordinal -> physical device index; every device when `text` is unset.
std::vector<std::size_t> visible_devices(std::optional<std::string_view> text,
                                         std::span<const DeviceSpec> fleet);

}  // namespace gpuslice::fake
