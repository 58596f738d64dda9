#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"

#include <fmt/format.h>

#include "codec/fields.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {
using fields::split;

// Memory and cores of a grant: whole, in range and not negative.
template <typename T>
T grant_field(std::string_view text, std::string_view field) {
  const T value = fields::parse_int<T>(text, field, " in allocation");
  if (value < 0) throw CodecError(fmt::format("{} must not be negative in allocation: '{}'", field, text));
  return value;
}
}  // namespace

std::string encode_allocation(const PodAllocation& allocation, const Node& node) {
  std::string out;
  for (const auto& container : allocation.containers) {
    for (const auto& g : container) {
      const auto& d = node.devices.at(static_cast<size_t>(g.device));
      out += fmt::format("{},{},{},{}:", d.uuid, d.vendor, g.memory_mib, g.cores);
    }
    out += ';';
  }
  return out;
}

AllocationText decode_allocation_text(std::string_view text) {
  AllocationText out;
  auto containers = split(text, ';');
  // Every container is closed by ';', so the piece after the last one is empty.
  if (!containers.empty() && containers.back().empty()) containers.pop_back();
  for (auto c : containers) {
    std::vector<GrantText> grants;
    for (auto entry : split(c, ':')) {
      if (entry.find(',') == std::string_view::npos) {
        if (!entry.empty()) throw CodecError(fmt::format("malformed device entry '{}' in allocation", entry));
        continue;
      }
      auto f = split(entry, ',');
      if (f.size() != 4)
        throw CodecError(fmt::format("device entry '{}' has {} fields, want 4", entry, f.size()));
      if (f[0].empty()) throw CodecError(fmt::format("device entry '{}' has an empty UUID", entry));
      grants.push_back({std::string(f[0]), std::string(f[1]), grant_field<int32_t>(f[2], "memory"),
                        grant_field<int32_t>(f[3], "cores")});
    }
    out.push_back(std::move(grants));
  }
  return out;
}

PodAllocation resolve_allocation(const AllocationText& text, const Node& node, size_t init_count) {
  PodAllocation a;
  a.init_count = std::min(init_count, text.size());
  for (const auto& container : text) {
    std::vector<DeviceGrant> grants;
    for (const auto& g : container) {
      int pos = -1;
      for (size_t i = 0; i < node.devices.size(); ++i)
        if (node.devices[i].uuid == card_of(g.uuid)) pos = static_cast<int>(i);
      if (pos < 0)
        throw CodecError(fmt::format("card '{}' is not registered on node '{}'", g.uuid, node.name));
      grants.push_back({pos, g.memory_mib, g.cores});
    }
    a.containers.push_back(std::move(grants));
  }
  return a;
}

}  // namespace gpuslice::core::codec
