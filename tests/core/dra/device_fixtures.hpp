// Devices for the DRA tests, written as a ResourceSlice would publish them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/dialects/dra/device.hpp"

namespace gpuslice::core::dra::test {

inline AttributeValue int_value(int64_t v) {
  AttributeValue a;
  a.kind = AttributeValue::Kind::Int;
  a.int_value = v;
  return a;
}
inline AttributeValue string_value(std::string v) {
  AttributeValue a;
  a.kind = AttributeValue::Kind::String;
  a.string_value = std::move(v);
  return a;
}
inline AttributeValue bool_value(bool v) {
  AttributeValue a;
  a.kind = AttributeValue::Kind::Bool;
  a.bool_value = v;
  return a;
}
inline AttributeValue version_value(const std::string& v) {
  AttributeValue a;
  a.kind = AttributeValue::Kind::Version;
  a.version = *parse_semver(v);
  return a;
}

inline Device make_device(std::string name, const std::string& driver,
                          std::vector<std::pair<std::string, AttributeValue>> attributes,
                          std::vector<std::pair<std::string, std::string>> capacity = {}) {
  Device d;
  d.name = std::move(name);
  for (auto& [key, value] : attributes)
    d.attributes.push_back(Attribute{qualify(key, driver), std::move(value)});
  for (auto& [key, quantity] : capacity)
    d.capacity.push_back(Capacity{qualify(key, driver), codec::parse_quantity_milli(quantity), std::nullopt});
  return d;
}

}  // namespace gpuslice::core::dra::test
