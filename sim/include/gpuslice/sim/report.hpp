// A run's outputs: summary.json, timeline.csv, pods.csv, events.jsonl,
// card_use.csv, report.html, and a short table for a person.
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

// A file or folder that cannot be written: the CLI reports it as bad input
// (exit 2), Python raises OSError.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Creates `dir` and checks a file can be written in it; throws OutputError.
void prepare_output_folder(const std::string& dir);
// Throws OutputError when a file cannot be written.
void write_outputs(const RunResult& result, const std::string& dir);
void print_table(const RunResult& result, std::ostream& out);

}  // namespace gpuslice::sim
