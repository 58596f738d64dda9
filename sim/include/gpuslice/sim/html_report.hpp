// report.html: one self-contained page a person reads after a run (a summary,
// a snapshot's queue pod by pod, and Chart.js charts of the run's outputs,
// everything inlined, no network access when opened).
#pragma once

#include <cstddef>
#include <string>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

// Bounds that keep the page small whatever the run's size.
struct ReportLimits {
  size_t time_points = 2000;     // time series are sampled down to this many points
  size_t heatmap_rows = 200;     // cards are grouped into at most this many rows
  size_t heatmap_columns = 200;  // time is cut into this many columns
  size_t pending_bins = 40;      // pending-time histogram bins, at most
  size_t queue_rows = 500;       // a snapshot's queue table: the first pods, then a count
};

// The page for a run: its summary, timeline, pods and card_use (events are
// not drawn).
std::string render_report_html(const RunResult& run, const ReportLimits& limits = {});

// Writes DIR/report.html; throws OutputError when it cannot.
void write_report(const RunResult& run, const std::string& dir);

}  // namespace gpuslice::sim
