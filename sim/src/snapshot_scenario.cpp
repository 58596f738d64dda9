// A snapshot run's command line (--snapshot, --pods, --add-nodes, --cordon,
// --assume-duration) as a scenario: the snapshot's nodes lead the fleet.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/snapshot.hpp"
#include "scenario_file.hpp"

namespace gpuslice::sim {

using core::InputError;

FleetGroup added_node_group(const std::string& path, int count, const std::vector<core::Node>& snapshot_nodes,
                            const std::vector<FleetGroup>& others) {
  auto nodes = core::codec::parse_nodes(core::codec::read_text_file(path), path);
  if (nodes.size() != 1)
    throw InputError(path, nodes.empty() ? 0 : nodes[1].line, "kind",
                     fmt::format("--add-nodes needs exactly one Node, found {}", nodes.size()));
  FleetGroup g;
  g.node.name = nodes.front().node.name;
  for (const auto& n : snapshot_nodes)
    if (n.name.rfind(g.node.name + "-", 0) == 0)
      throw InputError(path, nodes.front().line, "metadata.name",
                       fmt::format("added nodes are named {}-<i>, which the snapshot's node '{}' could clash "
                                   "with: rename the template",
                                   g.node.name, n.name));
  for (const auto& other : others)
    if (other.node.name == g.node.name)
      throw InputError(path, nodes.front().line, "metadata.name",
                       fmt::format("two --add-nodes files name their node '{}'", g.node.name));
  g.count = count;
  g.node.cards = static_cast<int>(nodes.front().node.devices.size());
  g.prototype = std::move(nodes.front().node);
  return g;
}

Scenario snapshot_scenario(const SnapshotRunSpec& spec) {
  if (spec.assume_duration && !(*spec.assume_duration > 0 && std::isfinite(*spec.assume_duration)))
    throw InputError("command line", 0, "--assume-duration", "must be a positive duration");
  Scenario s;
  bool fleet_replaced = false, queue_given = false;
  if (spec.pods) {
    ScenarioFile file = parse_scenario_file(core::codec::read_text_file(*spec.pods), *spec.pods,
                                            std::filesystem::path(*spec.pods).parent_path().string(), true);
    s = std::move(file.scenario);
    fleet_replaced = file.names_fleet;
    queue_given = file.names_queue;
  } else {
    s.name = std::filesystem::path(spec.snapshot).stem().string();
  }
  s.snapshot = load_snapshot(spec.snapshot, spec.assume_duration, spec.defaults);
  if (spec.strict && !s.snapshot->malformed.empty()) s.snapshot->malformed.front().raise();
  // kube-scheduler retries every pending pod on its own: one that does not
  // fit blocks nobody behind it.
  if (!queue_given) s.queue = QueueDiscipline::SkipAhead;
  if (fleet_replaced)
    s.snapshot->warnings.push_back(
        fmt::format("{}: its fleet is replaced by the snapshot's nodes; only its pods are used", *spec.pods));
  if (s.description.empty())
    s.description =
        fmt::format("snapshot {}: {} nodes, {} GPU pods running, {} pending", spec.snapshot,
                    s.snapshot->nodes.size(), s.snapshot->running_gpu_pods, s.snapshot->queue.size());
  for (const auto& name : spec.cordon) {
    auto it = std::find_if(s.snapshot->nodes.begin(), s.snapshot->nodes.end(),
                           [&](const core::Node& n) { return n.name == name; });
    if (it == s.snapshot->nodes.end())
      throw InputError("command line", 0, "--cordon", fmt::format("the snapshot has no node '{}'", name));
    cordon_all_cards(*it);
  }
  for (const auto& add : spec.add_nodes) {
    const auto colon = add.rfind(':');
    int count = 1;
    std::string path = add;
    if (colon != std::string::npos) {
      path = add.substr(0, colon);
      const std::string c = add.substr(colon + 1);
      const auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), count);
      if (ec != std::errc() || end != c.data() + c.size() || count < 0 || count > 100000)
        throw InputError("command line", 0, "--add-nodes",
                         fmt::format("'{}': write NODE.yaml:COUNT with COUNT between 0 and 100000", add));
    }
    s.fleet_groups.push_back(added_node_group(path, count, s.snapshot->nodes, s.fleet_groups));
  }
  if (spec.node_groups)
    join_node_groups(
        s, parse_node_groups_file(core::codec::read_text_file(*spec.node_groups), *spec.node_groups));
  set_fleet_counts(s, {}, {});
  return s;
}

}  // namespace gpuslice::sim
