// Kubernetes resource quantities ("4", "500m", "32Gi", "1e3", "2k").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuslice::core::codec {

// Exact value in milli-units; throws CodecError on malformed text or overflow.
int64_t parse_quantity_milli(std::string_view text);
// Value rounded up to an integer, as Quantity.Value() does.
int64_t parse_quantity_value(std::string_view text);
// Value as an integer when it is one (Quantity.AsInt64); throws otherwise.
int64_t parse_quantity_integer(std::string_view text);

// A whole value as Kubernetes prints resource.NewQuantity(v, DecimalSI)
// ("50", "1500", "2k") and NewQuantity(v, BinarySI) ("11520Mi", "1536",
// "16Gi"): the canonical forms Koordinator's annotations carry.
std::string format_quantity_decimal_si(int64_t value);
std::string format_quantity_binary_si(int64_t value);

}  // namespace gpuslice::core::codec
