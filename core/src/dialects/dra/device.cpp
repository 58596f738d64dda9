#include "gpuslice/core/dialects/dra/device.hpp"

namespace gpuslice::core::dra {

bool AttributeValue::operator==(const AttributeValue& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::Int:
      return int_value == other.int_value;
    case Kind::Bool:
      return bool_value == other.bool_value;
    case Kind::String:
      return string_value == other.string_value;
    case Kind::Version:
      // The allocator's constraints compare the version strings as written.
      return version.text() == other.version.text();
  }
  return false;
}

QualifiedName qualify(std::string_view written, std::string_view driver) {
  const size_t slash = written.find('/');
  if (slash == std::string_view::npos)
    return QualifiedName{std::string(written), std::string(driver), std::string(written)};
  return QualifiedName{std::string(written), std::string(written.substr(0, slash)),
                       std::string(written.substr(slash + 1))};
}

const Attribute* Device::attribute(std::string_view domain, std::string_view id) const {
  for (const auto& a : attributes)
    if (a.name.id == id && a.name.domain == domain) return &a;
  return nullptr;
}

const Capacity* Device::capacity_named(std::string_view written) const {
  for (const auto& c : capacity)
    if (c.name.written == written) return &c;
  return nullptr;
}

}  // namespace gpuslice::core::dra
