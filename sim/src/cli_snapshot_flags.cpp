#include <fmt/format.h>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/hami/device_config.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/cli.hpp"

namespace gpuslice::sim {

void add_snapshot_flags(CLI::App& cmd, SnapshotFlags& flags, const std::string& snapshot_help) {
  cmd.add_option("--snapshot", flags.snapshot, snapshot_help);
  cmd.add_option("--cordon", flags.cordon, "with --snapshot: a node nothing new is placed on (repeatable)");
  cmd.add_option("--assume-duration", flags.assume_duration,
                 "with --snapshot: how long pods run (running ones from now), e.g. 2h, 45m, 3d; pods with "
                 "gpuslice.io/expected-duration keep theirs; default: they never leave");
  cmd.add_option("--device-config", flags.device_config,
                 "with --snapshot: HAMi's device-config.yaml (resource names, request defaults, "
                 "migProfileAllowlist), validated as HAMi does; default: the Helm chart's");
  cmd.add_option("--node-groups", flags.node_groups,
                 "with --snapshot: Cluster Autoscaler's node groups (node_groups: and autoscaler: as in a "
                 "scenario); the snapshot's nodes join a group by its node_labels");
  cmd.add_flag("--strict", flags.strict,
               "with --snapshot: a pending pod whose request cannot be read is bad input (exit 2); default: "
               "it is left Pending with its reason (pods.csv, a warning) and the rest runs, as HAMi does");
}

SnapshotRunSpec snapshot_spec_of(const SnapshotFlags& flags) {
  SnapshotRunSpec spec;
  spec.snapshot = flags.snapshot;
  spec.cordon = flags.cordon;
  spec.strict = flags.strict;
  if (!flags.node_groups.empty()) spec.node_groups = flags.node_groups;
  if (!flags.device_config.empty())
    spec.defaults = core::codec::parse_device_config(core::codec::read_text_file(flags.device_config),
                                                     flags.device_config)
                        .requests;
  if (!flags.assume_duration.empty()) {
    spec.assume_duration = parse_duration(flags.assume_duration);
    if (!spec.assume_duration)
      throw core::InputError(
          "command line", 0, "--assume-duration",
          fmt::format("'{}' is not a duration (write 45m, 2h30m, 3d or seconds)", flags.assume_duration));
  }
  return spec;
}

}  // namespace gpuslice::sim
