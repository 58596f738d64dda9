// report.html's summary, written for people: the run, its pods, how long
// they waited and how much of the fleet they held, grouped, with units;
// rows a run does not have are left out, and so is what only gpuslice's own
// bookkeeping needs (wall time, pods per second). Each row's title names
// the summary.json field it comes from.
#pragma once

#include <string>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

std::string summary_html(const RunResult& run);

}  // namespace gpuslice::sim
