#pragma once
#include <CLI/CLI.hpp>
namespace gpuslice::plan {
// Adds `plan` to the gpuslice command line: exit 0 when a fleet in range
// meets the targets, 1 when none does, 2 for bad input.
void register_cli(CLI::App& app);
}  // namespace gpuslice::plan
