#pragma once
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {
// Adds `simulate`, `study`, `report` and `compare` to the gpuslice command line.
void register_cli(CLI::App& app);
void register_study_cli(CLI::App& app);
void register_report_cli(CLI::App& app);
void register_compare_cli(CLI::App& app);

struct ComparedRun;
// Writes DIR/compare.html and compare.csv (an unwritable DIR is bad input
// naming --out) and prints the comparison.
void write_and_print_comparison(const std::vector<ComparedRun>& runs, const std::string& out_dir,
                                std::ostream& out);

// The flags `simulate` and `plan` share to start from a cluster snapshot.
struct SnapshotFlags {
  std::string snapshot, assume_duration, device_config, node_groups;
  std::vector<std::string> cordon;
  bool strict = false;  // a malformed pending pod is bad input, not left out
  // True when a flag that only goes with --snapshot was given.
  bool snapshot_only_given() const {
    return !cordon.empty() || !assume_duration.empty() || !device_config.empty() || !node_groups.empty();
  }
};
// --snapshot (with `snapshot_help`), --cordon, --assume-duration, --device-config, --node-groups and
// --strict.
void add_snapshot_flags(CLI::App& cmd, SnapshotFlags& flags, const std::string& snapshot_help);
// The snapshot, cordons and assumed duration those flags give; a bad
// duration is an InputError naming --assume-duration.
SnapshotRunSpec snapshot_spec_of(const SnapshotFlags& flags);
}  // namespace gpuslice::sim
