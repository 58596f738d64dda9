// The timeline's columns, listed once. timeline.csv (written and read back
// by `gpuslice report`), the Python DataFrame and the HTML report's series
// all follow this table, so a new column is one new row here.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "gpuslice/sim/run_metrics.hpp"

namespace gpuslice::sim {

struct TimelineColumn {
  enum class Kind { Seconds, Count, Percent };
  std::string_view name;
  Kind kind;
  // Exactly one is set: counts are integers, the rest are reals.
  size_t TimelineRow::*count = nullptr;
  double TimelineRow::*real = nullptr;
  // Run folders written before the column existed lack it; it reads 0.
  bool optional_when_read = false;
  // In the HTML report's series (it leaves out what its charts never draw).
  bool in_report = true;

  double value(const TimelineRow& row) const { return count ? static_cast<double>(row.*count) : row.*real; }
};

// In timeline.csv's order.
std::span<const TimelineColumn> timeline_columns();

}  // namespace gpuslice::sim
