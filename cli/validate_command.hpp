#pragma once
#include <CLI/CLI.hpp>

namespace gpuslice::cli {
void register_validate_command(CLI::App& app);
}
