#include "gpuslice/core/dialects/hami/mig_allocations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

using nlohmann::json;

// Go's decoder into an int / uint32 / string field: null leaves the zero
// value, a value of another JSON type (or out of range) is an error.
template <typename T>
std::optional<T> optional_int(const json& obj, const char* key, size_t i) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer())
    throw CodecError(fmt::format("MIG allocation {}: field '{}' must be an integer", i, key));
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))
    throw CodecError(fmt::format("MIG allocation {}: field '{}' out of range", i, key));
  const auto v = it->get<int64_t>();
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      (!it->is_number_unsigned() && v > static_cast<int64_t>(std::numeric_limits<T>::max())))
    throw CodecError(fmt::format("MIG allocation {}: field '{}' out of range: {}", i, key, v));
  return static_cast<T>(v);
}

std::string string_field(const json& obj, const char* key, size_t i) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string())
    throw CodecError(fmt::format("MIG allocation {}: field '{}' must be a string", i, key));
  return it->get<std::string>();
}

}  // namespace

std::string encode_mig_allocations(const PodAllocation& allocation, const Node& node) {
  // Asked for every placement: most hold no MIG instance, and building an
  // empty JSON array costs more than looking.
  const bool any =
      std::any_of(allocation.containers.begin(), allocation.containers.end(), [](const auto& grants) {
        return std::any_of(grants.begin(), grants.end(), [](const DeviceGrant& g) { return g.is_mig(); });
      });
  if (!any) return {};
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t c = 0; c < allocation.containers.size(); ++c) {
    const auto& grants = allocation.containers[c];
    for (size_t k = 0; k < grants.size(); ++k) {
      const DeviceGrant& g = grants[k];
      if (!g.is_mig() || g.mig_profile < 0) continue;
      const Device& d = node.devices.at(static_cast<size_t>(g.device));
      nlohmann::ordered_json o;
      o["containerIndex"] = c;
      o["deviceIndex"] = k;
      o["gpuUUID"] = d.uuid;
      o["profile"] = d.mig_profiles.at(static_cast<size_t>(g.mig_profile)).name;
      o["placement"] = {{"start", g.mig_placement.start}, {"size", g.mig_placement.size}};
      out.push_back(std::move(o));
    }
  }
  if (out.empty()) return {};
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<MigReservation> decode_mig_allocations(std::string_view text) {
  if (text.empty()) return {};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw CodecError(fmt::format("MIG allocations are not valid JSON: {}", e.what()));
  }
  if (doc.is_null()) return {};  // Go decodes null into an empty list
  if (!doc.is_array()) throw CodecError("MIG allocations must be a JSON array");
  std::vector<MigReservation> out;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t i = 0; i < doc.size(); ++i) {
    const json& e = doc[i];
    // Go leaves a null element at its zero value, which is incomplete.
    if (e.is_null()) throw CodecError(fmt::format("MIG allocation {} is incomplete", i));
    if (!e.is_object()) throw CodecError(fmt::format("MIG allocation {} must be an object", i));
    MigReservation r;
    r.container_index = optional_int<int64_t>(e, "containerIndex", i).value_or(0);
    r.device_index = optional_int<int64_t>(e, "deviceIndex", i).value_or(0);
    r.gpu_uuid = string_field(e, "gpuUUID", i);
    r.profile = string_field(e, "profile", i);
    auto pl = e.find("placement");
    if (pl != e.end() && !pl->is_null()) {
      if (!pl->is_object())
        throw CodecError(fmt::format("MIG allocation {}: field 'placement' must be an object", i));
      r.placement.start = optional_int<uint32_t>(*pl, "start", i).value_or(0);
      r.placement.size = optional_int<uint32_t>(*pl, "size", i).value_or(0);
    }
    r.mig_uuid = string_field(e, "migUUID", i);
    r.gpu_instance_id = optional_int<uint32_t>(e, "gpuInstanceID", i);
    r.compute_instance_id = optional_int<uint32_t>(e, "computeInstanceID", i);
    if (r.container_index < 0 || r.device_index < 0 || r.gpu_uuid.empty() || r.profile.empty() ||
        r.placement.size == 0)
      throw CodecError(fmt::format("MIG allocation {} is incomplete", i));
    const int runtime_fields = int{!r.mig_uuid.empty()} + int{r.gpu_instance_id.has_value()} +
                               int{r.compute_instance_id.has_value()};
    if (runtime_fields != 0 && runtime_fields != 3)
      throw CodecError(fmt::format("MIG allocation {} has partial runtime identity", i));
    if (!seen.emplace(r.container_index, r.device_index).second)
      throw CodecError(fmt::format("duplicate MIG allocation for container {} device {}", r.container_index,
                                   r.device_index));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gpuslice::core::codec
