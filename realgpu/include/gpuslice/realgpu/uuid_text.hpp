// A GPU's identity as the driver gives it (16 bytes, cuDeviceGetUuid) and as
// NVML and nvidia-smi write it ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
// The shim matches CUDA devices to NVML devices through it, the fake driver
// writes it, the probe prints it: one spelling for all three.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace gpuslice::realgpu {

using DeviceUuid = std::array<unsigned char, 16>;

inline std::string uuid_text(const DeviceUuid& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[uuid[i] >> 4];
    out += kHex[uuid[i] & 0xF];
  }
  return out;
}

// Reads "GPU-<32 hex digits with dashes anywhere>" (the prefix optional);
// false when it is not exactly 16 bytes of hex.
inline bool parse_uuid_text(std::string_view text, DeviceUuid& out) {
  if (text.substr(0, 4) == "GPU-") text.remove_prefix(4);
  size_t n = 0;
  for (char c : text) {
    if (c == '-') continue;
    int v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v = c - 'A' + 10;
    else
      return false;
    if (n >= 32) return false;
    out[n / 2] = static_cast<unsigned char>(n % 2 == 0 ? v << 4 : out[n / 2] | v);
    ++n;
  }
  return n == 32;
}

}  // namespace gpuslice::realgpu
