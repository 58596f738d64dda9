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

// HAMi's type string for an NVML name: "NVIDIA-" prefix unless it already starts with NVIDIA.
std::string registered_type(std::string_view nvml_name);

}  // namespace gpuslice::core::codec
