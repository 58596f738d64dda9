// HAMi's reading of placed pods (placed.cpp), for its unit.
#pragma once

#include <memory>

#include "gpuslice/core/dialects/dialect.hpp"

namespace gpuslice::core::dialects {

std::unique_ptr<PlacedReading> hami_placed_reading(PlacedContext& context);

}  // namespace gpuslice::core::dialects
