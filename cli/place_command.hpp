#pragma once
#include <CLI/CLI.hpp>
namespace gpuslice::cli {
void register_place_command(CLI::App& app);
}
