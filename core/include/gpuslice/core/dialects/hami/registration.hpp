// hami.io/node-nvidia-register (JSON array, v2.8+, and the legacy
// "id,count,devmem,devcore,type,numa,health[,index,mode]:" form) and
// hami.io/node-nvidia-score pair scores.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::core::codec {

inline constexpr std::string_view kRegisterAnnotation = "hami.io/node-nvidia-register";
inline constexpr std::string_view kPairScoreAnnotation = "hami.io/node-nvidia-score";
inline constexpr std::string_view kCordonAnnotation = "hami.io/device-cordon";

// Accepts either form (JSON when it starts with '['). Throws CodecError.
std::vector<Device> decode_registration(std::string_view text);
std::string encode_registration_json(const std::vector<Device>& devices);
std::string encode_registration_legacy(const std::vector<Device>& devices);

// [{"uuid":"GPU-0","score":{"GPU-1":100}}] -> matrix by device position.
std::vector<std::vector<int>> decode_pair_scores(std::string_view text, const std::vector<Device>& devices);
std::string encode_pair_scores(const std::vector<std::vector<int>>& scores,
                               const std::vector<Device>& devices);

// "GPU-a, GPU-b" -> {"GPU-a","GPU-b"} (blank entries skipped).
std::vector<std::string> decode_uuid_list(std::string_view text);

// A card as the device plugin discovers it (NVML), before registration.
struct PhysicalCard {
  std::string uuid;
  std::string nvml_name;  // e.g. "Tesla T4"
  int64_t memory_mib = 0;
  int numa = 0;
  bool healthy = true;
};

// What HAMi's device plugin registers for these cards under a node's
// config: count = split count, devmem = MiB x memory scaling, devcore =
// 100 x core scaling, type = registered_type(name), index = position.
std::vector<Device> register_cards(const std::vector<PhysicalCard>& cards, const NodeDeviceConfig& config);

// HAMi's type string for an NVML name: "NVIDIA-" prefix unless it already starts with NVIDIA.
std::string registered_type(std::string_view nvml_name);

}  // namespace gpuslice::core::codec
