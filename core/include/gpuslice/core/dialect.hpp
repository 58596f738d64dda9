// The schedulers whose resource names, fleets and decisions gpuslice
// models: HAMi (and the FGD study's policies, which read HAMi's requests),
// Koordinator's DeviceShare and NVIDIA's KAI scheduler (docs/dialects.md).
#pragma once

#include <string_view>

namespace gpuslice::core {

enum class Dialect { Hami, Koordinator, Kai };

inline std::string_view dialect_name(Dialect d) {
  switch (d) {
    case Dialect::Koordinator:
      return "koordinator";
    case Dialect::Kai:
      return "kai";
    case Dialect::Hami:
      break;
  }
  return "hami";
}

}  // namespace gpuslice::core
