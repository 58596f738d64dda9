// Reading a run's output folder back (gpuslice report re-renders report.html
// from it): summary.json, timeline.csv, pods.csv and, when the run kept it,
// card_use.csv.
#pragma once

#include <string>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

// The run as `gpuslice simulate --out DIR` wrote it (events are not read;
// the per-card log only when `card_use`). A missing or malformed file is a
// core::InputError naming the file, line and column.
RunResult read_run_folder(const std::string& dir, bool card_use = true);

}  // namespace gpuslice::sim
