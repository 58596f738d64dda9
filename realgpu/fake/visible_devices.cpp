#include "visible_devices.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace gpuslice::fake {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequal_prefix(std::string_view prefix, std::string_view full) {
  if (prefix.size() > full.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(prefix[i])) !=
        std::tolower(static_cast<unsigned char>(full[i])))
      return false;
  return true;
}

std::optional<std::size_t> resolve(std::string_view token, std::span<const DeviceSpec> fleet) {
  if (token.empty()) return std::nullopt;
  if (iequal_prefix("GPU-", token)) {
    std::optional<std::size_t> match;
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      if (!iequal_prefix(token, realgpu::uuid_text(device_uuid(i, fleet[i].name)))) continue;
      if (match) return std::nullopt;  // ambiguous prefix
      match = i;
    }
    return match;
  }
  std::size_t index = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::size_t>(c - '0');
    if (index >= fleet.size()) return std::nullopt;
  }
  return index;
}

}  // namespace

std::vector<std::size_t> visible_devices(std::optional<std::string_view> text,
                                         std::span<const DeviceSpec> fleet) {
  std::vector<std::size_t> result;
  if (!text) {
    for (std::size_t i = 0; i < fleet.size(); ++i) result.push_back(i);
    return result;
  }
  std::size_t begin = 0;
  while (begin <= text->size()) {
    const std::size_t end = std::min(text->find(',', begin), text->size());
    const std::optional<std::size_t> device = resolve(trim(text->substr(begin, end - begin)), fleet);
    if (!device || std::find(result.begin(), result.end(), *device) != result.end()) break;
    result.push_back(*device);
    begin = end + 1;
  }
  return result;
}

}  // namespace gpuslice::fake
