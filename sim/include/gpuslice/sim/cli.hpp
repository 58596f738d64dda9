#pragma once
#include <CLI/CLI.hpp>
namespace gpuslice::sim {
// Adds `simulate`, `study` and `report` to the gpuslice command line.
void register_cli(CLI::App& app);
void register_study_cli(CLI::App& app);
void register_report_cli(CLI::App& app);
}  // namespace gpuslice::sim
