// File reading for the CLI: the only place the front end touches the disk
// for its inputs, so every error names the file.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::cli {

inline std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw core::InputError(path, 0, "", "is a folder; give a file (YAML or JSON manifests)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError(path, 0, "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpuslice::cli
