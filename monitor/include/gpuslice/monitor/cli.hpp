// `gpuslice monitor` (see docs/realgpu.md, "The node monitor").
#pragma once

#include <CLI/CLI.hpp>

namespace gpuslice::monitor {
void register_cli(CLI::App& app);
}
