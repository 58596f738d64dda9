// File reading for the CLI: the only place the front end touches the disk
// for its inputs, so every error names the file.
#pragma once

#include <string>

#include "gpuslice/core/codec/text_file.hpp"

namespace gpuslice::cli {

inline std::string read_file(const std::string& path) { return core::codec::read_text_file(path); }

}  // namespace gpuslice::cli
