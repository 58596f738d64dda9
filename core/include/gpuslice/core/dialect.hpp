// The schedulers whose resource names, fleets and decisions gpuslice
// models: HAMi (and the FGD study's policies, which read HAMi's requests),
// Koordinator's DeviceShare, NVIDIA's KAI scheduler and Kubernetes' DRA
// (resource.k8s.io ResourceSlices and ResourceClaims; docs/dialects.md).
// Each is one unit (gpuslice/core/dialects/dialect.hpp); this value names
// it where the model records who registered a node's cards.
#pragma once

#include <string_view>

namespace gpuslice::core {

enum class Dialect { Hami, Koordinator, Kai, Dra };

// "hami", "koordinator", "kai", "dra": the unit's name (core/src/dialects/registry.cpp).
std::string_view dialect_name(Dialect d);

}  // namespace gpuslice::core
