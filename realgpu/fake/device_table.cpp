#include "device_table.hpp"

#include <algorithm>
#include <charconv>

namespace gpuslice::fake {

namespace {

constexpr const char* kFleetSyntax = "expected name:MiB:SMs[;name:MiB:SMs...]";

std::string describe(std::size_t entry, std::string_view text, std::string_view why) {
  return std::string(kFleetVariable) + ": entry " + std::to_string(entry + 1) + " \"" + std::string(text) +
         "\": " + std::string(why) + " (" + kFleetSyntax + ")";
}

// Digits only: a sign, blank or unit suffix is refused rather than read.
bool parse_positive(std::string_view text, std::uint64_t max, std::uint64_t& out) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out > 0 && out <= max;
}

}  // namespace

FleetParse parse_fleet(std::string_view text) {
  FleetParse result;
  if (text.empty()) {
    result.error = std::string(kFleetVariable) + ": empty (" + kFleetSyntax + ")";
    return result;
  }
  std::size_t entry = 0;
  for (std::size_t begin = 0;; ++entry) {
    const std::size_t end = std::min(text.find(';', begin), text.size());
    const std::string_view item = text.substr(begin, end - begin);
    if (entry >= kMaxDevices) {
      result.error = describe(entry, item, "more than " + std::to_string(kMaxDevices) + " devices");
      return result;
    }
    const std::size_t first = item.find(':');
    const std::size_t second = first == std::string_view::npos ? first : item.find(':', first + 1);
    if (second == std::string_view::npos || item.find(':', second + 1) != std::string_view::npos) {
      result.error = describe(entry, item, "needs exactly three ':'-separated fields");
      return result;
    }
    const std::string_view name = item.substr(0, first);
    const std::string_view mib = item.substr(first + 1, second - first - 1);
    const std::string_view sms = item.substr(second + 1);
    DeviceSpec spec;
    std::uint64_t sm_count = 0;
    if (name.empty() || name.size() > kMaxNameLength) {
      result.error =
          describe(entry, item, "name must be 1.." + std::to_string(kMaxNameLength) + " characters");
      return result;
    }
    // 2^40 MiB keeps byte counts far from 64-bit overflow.
    if (!parse_positive(mib, std::uint64_t{1} << 40, spec.memory_mib)) {
      result.error = describe(entry, item, "MiB \"" + std::string(mib) + "\" is not a positive whole number");
      return result;
    }
    if (!parse_positive(sms, 1u << 20, sm_count)) {
      result.error = describe(entry, item, "SMs \"" + std::string(sms) + "\" is not a positive whole number");
      return result;
    }
    spec.name = std::string(name);
    spec.sm_count = static_cast<std::uint32_t>(sm_count);
    result.devices.push_back(std::move(spec));
    if (end == text.size()) break;
    begin = end + 1;
  }
  return result;
}

std::uint64_t fnv1a64(std::string_view text, std::uint64_t seed) {
  std::uint64_t hash = seed;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

Uuid device_uuid(std::size_t index, std::string_view name) {
  const std::string key = std::to_string(index) + ":" + std::string(name);
  // Two differently seeded hashes give the 16 bytes; a final mix spreads
  // short keys over all bits.
  const std::uint64_t halves[2] = {fnv1a64(key), fnv1a64(key, 0x84222325cbf29ce4ULL)};
  Uuid uuid{};
  for (std::size_t h = 0; h < 2; ++h) {
    std::uint64_t x = halves[h];
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    for (std::size_t b = 0; b < 8; ++b) uuid[h * 8 + b] = static_cast<std::uint8_t>(x >> (8 * b));
  }
  return uuid;
}

}  // namespace gpuslice::fake
