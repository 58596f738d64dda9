// report.html: one self-contained page a person reads after a run (a summary
// table and Chart.js charts of the run's outputs, everything inlined, no
// network access when opened).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

// Bounds that keep the page small whatever the run's size.
struct ReportLimits {
  size_t time_points = 2000;     // time series are sampled down to this many points
  size_t heatmap_rows = 200;     // cards are grouped into at most this many rows
  size_t heatmap_columns = 200;  // time is cut into this many columns
  size_t pending_bins = 40;      // pending-time histogram bins
};

// The page for a run: its summary, timeline, pods and card_use (events are
// not drawn).
std::string render_report_html(const RunResult& run, const ReportLimits& limits = {});

// Text for HTML, with & < > " escaped.
std::string escape_html(std::string_view text);
// JSON text for a <script> element: "</" would end the element early, so it
// is written "<\/" (the same string to a JSON reader).
std::string script_safe(std::string json);

// Writes DIR/report.html; throws OutputError when it cannot.
void write_report(const RunResult& run, const std::string& dir);

}  // namespace gpuslice::sim
