#pragma once
#include <CLI/CLI.hpp>

namespace gpuslice::defrag {
// Adds `defrag` to the gpuslice command line.
void register_cli(CLI::App& app);
}  // namespace gpuslice::defrag
