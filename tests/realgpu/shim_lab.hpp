// What the shim tests share: a scratch toolkit over the fake driver (removed
// at the end), slice environments, and the probe's first JSON line.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuslice/realgpu/child_process.hpp"
#include "gpuslice/realgpu/toolkit.hpp"

namespace gpuslice::realgpu::testing {

inline constexpr uint64_t MiB = 1ULL << 20;

struct ShimLab {
  Toolkit t = locate_toolkit(DriverChoice::Fake);
  ShimLab() = default;
  ShimLab(const ShimLab&) = delete;
  ShimLab& operator=(const ShimLab&) = delete;
  ~ShimLab() {
    std::error_code ec;
    std::filesystem::remove_all(t.scratch, ec);
  }
  // The probe's command line for `args`.
  std::vector<std::string> probe(std::vector<std::string> args) const {
    args.insert(args.begin(), t.probe);
    return args;
  }
  // A default-policy memory slice named `name` with `mib` MiB.
  std::map<std::string, std::string> slice(const std::string& name, uint64_t mib) const {
    return slice_environment(t, SliceSpec{name, mib, 0, "default", ""});
  }
};

// The first line of a child's output, as JSON (the probe and the adversary
// write one object there).
inline nlohmann::json first_json(const std::string& out) {
  const auto nl = out.find('\n');
  REQUIRE(nl != std::string::npos);
  return nlohmann::json::parse(out.substr(0, nl));
}

}  // namespace gpuslice::realgpu::testing
