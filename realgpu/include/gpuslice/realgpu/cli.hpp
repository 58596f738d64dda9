// `gpuslice realgpu check` and `gpuslice realgpu run`.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuslice::realgpu {

void register_cli(CLI::App& app);

}  // namespace gpuslice::realgpu
