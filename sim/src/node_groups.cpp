#include "gpuslice/sim/node_groups.hpp"

namespace gpuslice::sim {

std::optional<Expander> parse_expander(std::string_view text) {
  if (text == "least-waste") return Expander::LeastWaste;
  if (text == "price") return Expander::Price;
  if (text == "most-pods") return Expander::MostPods;
  if (text == "random") return Expander::Random;
  return std::nullopt;
}

std::string_view expander_name(Expander e) {
  switch (e) {
    case Expander::LeastWaste:
      return "least-waste";
    case Expander::Price:
      return "price";
    case Expander::MostPods:
      return "most-pods";
    case Expander::Random:
      return "random";
  }
  return "?";
}

core::Cluster fleet_with_groups(const core::Cluster& fleet, const std::vector<NodeGroupSpec>& groups) {
  std::vector<core::Node> first;
  first.reserve(fleet.size());
  for (size_t n = 0; n < fleet.size(); ++n) first.push_back(fleet.node(n));
  std::vector<FleetGroup> all;
  for (const auto& g : groups) all.push_back(FleetGroup{g.node, g.max, g.prototype});
  return build_fleet(all, first);
}

}  // namespace gpuslice::sim
