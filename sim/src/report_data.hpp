// What report.html's charts draw, reduced from a run so the page stays small
// for a 100k-node run: the time series sampled, pending times binned, the
// per-card use aggregated to a bounded grid.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuslice/sim/html_report.hpp"
#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

// {"end_seconds", "timeline": {columns}, "pending": {histogram},
//  "heatmap": {grid} or null, "not_placed": {by reason}}: see report.js.
nlohmann::ordered_json report_data(const RunResult& run, const ReportLimits& limits);

// The run's last instant: the timeline ends there, cards and pods never go past it.
double end_of(const RunResult& run);

// The timeline's columns (those the report draws), every k-th record and the
// last, at most `limit` records: {"records", "stride", column: [values]}.
nlohmann::ordered_json sampled_timeline(const std::vector<TimelineRow>& rows, size_t limit);

}  // namespace gpuslice::sim
