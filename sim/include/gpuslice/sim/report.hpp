// A run's outputs: summary.json, timeline.csv, pods.csv, events.jsonl, and a
// short table for a person.
#pragma once

#include <ostream>
#include <string>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

void write_outputs(const RunResult& result, const std::string& dir);
void print_table(const RunResult& result, std::ostream& out);

}  // namespace gpuslice::sim
