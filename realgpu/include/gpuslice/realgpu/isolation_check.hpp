// `gpuslice realgpu check`: the seed lab's isolation exercises, run with
// the probe under the shim on whatever driver is here (real or fake).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gpuslice/realgpu/toolkit.hpp"

namespace gpuslice::realgpu {

struct CheckOptions {
  DriverChoice driver = DriverChoice::Auto;
  double compute_seconds = 10;  // each compute exercise's window
  uint64_t slice_mib = 8000;    // the seed lab's slices: 8000 MiB
  uint64_t chunk_mib = 512;
  // Before each exercise: exercises done, in all, and the next one's name
  // (the CLI's progress line). Empty: none.
  std::function<void(size_t done, size_t total, const std::string& next)> progress;
};

struct Exercise {
  Exercise(std::string title, std::string pass_criteria)
      : name(std::move(title)), criteria(std::move(pass_criteria)) {}
  std::string name, criteria;
  bool passed = false;
  std::string result;
  nlohmann::json evidence;
  // What a node monitor reads in the exercise's accounting files (the
  // numbers `gpuslice monitor` and HAMi's vGPUmonitor export), taken while
  // the exercise runs: beside the shim's own figures in `result`.
  nlohmann::json monitor = nlohmann::json::array();
  std::string monitor_view;
};

struct CheckReport {
  std::string driver;
  nlohmann::json device;
  std::vector<Exercise> exercises;  // numbered 1.. in this order
  bool passed() const;
  nlohmann::json to_json() const;
  void print(std::ostream& out) const;
};

// Throws std::runtime_error when the exercises cannot run at all (no
// probe, no driver).
CheckReport run_isolation_check(const CheckOptions& options);

}  // namespace gpuslice::realgpu
