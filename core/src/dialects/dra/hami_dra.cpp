#include "gpuslice/core/dialects/dra/hami_dra.hpp"

#include <fmt/format.h>

namespace gpuslice::core::dra {
namespace {

constexpr int64_t kMiBytes = int64_t(1) << 20;

AttributeValue text(std::string s) {
  AttributeValue v;
  v.kind = AttributeValue::Kind::String;
  v.string_value = std::move(s);
  return v;
}

}  // namespace

DeviceClass hami_dra_class() {
  return DeviceClass{
      kHamiDraClass,
      {fmt::format("device.driver == '{0}' && device.attributes['{0}'].type == 'hami-gpu'", kHamiDraDriver)},
      ""};
}

std::vector<Capacity> hami_dra_capacity(const core::Device& card) {
  const int64_t memory_milli = card.memory_mib * kMiBytes * 1000;
  RequestPolicy memory_policy;
  memory_policy.default_milli = memory_milli;
  memory_policy.valid_range = CapacityRange{kMiBytes * 1000, std::nullopt, kMiBytes * 1000};
  RequestPolicy cores_policy;
  cores_policy.default_milli = int64_t(card.cores) * 1000;
  cores_policy.valid_range = CapacityRange{0, int64_t(card.cores) * 1000, 1000};
  std::vector<Capacity> capacity;
  capacity.reserve(2);
  capacity.push_back(Capacity{qualify("cores", kHamiDraDriver), int64_t(card.cores) * 1000, cores_policy});
  capacity.push_back(Capacity{qualify("memory", kHamiDraDriver), memory_milli, memory_policy});
  return capacity;
}

Device hami_dra_device(const core::Device& card, int position) {
  Device d;
  d.name = "hami-gpu-" + std::to_string(position);
  d.allow_multiple_allocations = true;
  d.attributes.reserve(4);
  d.attributes.push_back(Attribute{qualify("type", kHamiDraDriver), text("hami-gpu")});
  d.attributes.push_back(Attribute{qualify("uuid", kHamiDraDriver), text(card.uuid)});
  d.attributes.push_back(Attribute{qualify("productName", kHamiDraDriver), text(card.type)});
  AttributeValue index;
  index.kind = AttributeValue::Kind::Int;
  index.int_value = position;
  d.attributes.push_back(Attribute{qualify("index", kHamiDraDriver), index});
  d.capacity = hami_dra_capacity(card);
  return d;
}

std::optional<ClaimSpec> hami_dra_claim(const ContainerRequest& container, int64_t card_memory_mib) {
  if (!container.wants_devices()) return std::nullopt;
  ExactRequest r;
  r.device_class = kHamiDraClass;
  r.count = container.count;
  // Formatted once: a claim is written per container and fit.
  static const std::string selector =
      fmt::format("device.attributes[\"{}\"].type == \"hami-gpu\"", kHamiDraDriver);
  r.selectors = {selector};
  const int64_t memory_mib = container.memory_on(card_memory_mib);
  if (memory_mib > 0) r.capacity.emplace_back("memory", memory_mib * kMiBytes * 1000);
  if (container.cores > 0) r.capacity.emplace_back("cores", int64_t(container.cores) * 1000);
  ClaimSpec claim;
  DeviceRequest request;
  request.name = "gpu";
  request.exactly = std::move(r);
  claim.requests.push_back(std::move(request));
  return claim;
}

std::optional<ClaimSpec> extended_resource_claim(const std::string& resource, int64_t count,
                                                 const std::vector<DeviceClass>& classes) {
  for (const auto& c : classes) {
    if (c.extended_resource_name != resource) continue;
    ExactRequest r;
    r.device_class = c.name;
    r.count = count;
    ClaimSpec claim;
    DeviceRequest request;
    request.name = "container-0-request-0";
    request.exactly = std::move(r);
    claim.requests.push_back(std::move(request));
    return claim;
  }
  return std::nullopt;
}

}  // namespace gpuslice::core::dra
