#pragma once
#include <CLI/CLI.hpp>
namespace gpuslice::sim {
// Adds `simulate` to the gpuslice command line.
void register_cli(CLI::App& app);
}  // namespace gpuslice::sim
