#include "gpuslice/sim/fleet.hpp"

#include <fmt/format.h>

#include "gpuslice/core/dialects/hami/registration.hpp"

namespace gpuslice::sim {

namespace {
core::Node copy_of(const core::Node& prototype, const std::string& name) {
  core::Node n = prototype;
  n.name = name;
  n.cordoned_uuids.clear();
  for (size_t c = 0; c < n.devices.size(); ++c) {
    const std::string uuid = fmt::format("GPU-{}-{}", name, c);
    for (const auto& cordoned : prototype.cordoned_uuids)
      if (cordoned == n.devices[c].uuid) n.cordoned_uuids.push_back(uuid);
    n.devices[c].uuid = uuid;
  }
  return n;
}
}  // namespace

core::Cluster build_fleet(const std::vector<FleetGroup>& groups, const std::vector<core::Node>& first) {
  core::Cluster cluster;
  for (const auto& n : first) cluster.add_node(n);
  for (const auto& g : groups) {
    for (int i = 0; i < g.count; ++i) {
      if (g.prototype) {
        cluster.add_node(copy_of(*g.prototype, fmt::format("{}-{}", g.node.name, i)));
        continue;
      }
      core::Node n;
      n.name = fmt::format("{}-{}", g.node.name, i);
      n.model = g.node.model;
      n.capacity = {g.node.cpu_milli, g.node.memory_mib};
      for (int c = 0; c < g.node.cards; ++c) {
        core::Device d;
        d.uuid = fmt::format("GPU-{}-{}", n.name, c);
        d.index = c;
        d.type = core::codec::registered_type(g.node.model);
        d.slots = g.node.slots;
        d.memory_mib = g.node.card_memory_mib;
        d.cores = g.node.cores;
        d.numa = c * 2 / std::max(1, g.node.cards);  // two NUMA halves, as on dual-socket hosts
        d.healthy = true;
        d.mode = g.node.mode;
        d.mig_profiles = g.node.mig_profiles;
        n.devices.push_back(std::move(d));
      }
      cluster.add_node(std::move(n));
    }
  }
  return cluster;
}

}  // namespace gpuslice::sim
