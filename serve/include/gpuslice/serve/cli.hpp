// `gpuslice serve`: the scheduler extender (see docs/serve.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuslice::serve {
void register_cli(CLI::App& app);
}
