// The Kubernetes object kinds dialect units keep for themselves (DRA's
// ResourceSlices, DeviceClasses, ResourceClaims and templates): the one
// reader keeps an object of such a kind whole (codec::ResourceObject) and
// NodeObjects hands it to the unit that declared it. A light header: the
// reader asks it for every object it meets.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpuslice::core::dialects {

// A kind by its API group (apiVersion before the "/") and kind; any
// version of the group.
struct ObjectKind {
  std::string_view group, kind;
};

// The registry position of the unit that declared the kind
// (DialectUnit::object_kinds), or nullopt when none did.
std::optional<size_t> keeper_of(std::string_view group, std::string_view kind);

// "resource.k8s.io/v1" -> "resource.k8s.io" (as the reader tells kinds:
// the whole apiVersion when it has no "/").
inline std::string_view api_group(std::string_view api_version) {
  return api_version.substr(0, api_version.find('/'));
}

}  // namespace gpuslice::core::dialects
