// Reads a file of this repository (path relative to its root) as the
// codecs' TextInput, named by that relative path in error messages.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "gpuslice/core/place.hpp"

namespace gpuslice::core::testing {

inline TextInput source_file(const std::string& rel) {
  const std::string path = std::string(GPUSLICE_SOURCE_DIR) + "/" + rel;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return {ss.str(), rel};
}

}  // namespace gpuslice::core::testing
