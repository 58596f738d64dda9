// --node-groups FILE for a snapshot run: the snapshot's nodes join Cluster
// Autoscaler's groups by their labels, as a cloud provider tells a node's
// group by its node-pool label (GKE's cloud.google.com/gke-nodepool, EKS's
// eks.amazonaws.com/nodegroup, Karpenter's karpenter.sh/nodepool).
#include <fmt/format.h>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {

using core::InputError;

namespace {

bool carries(const core::codec::TextMap& labels,
             const std::vector<std::pair<std::string, std::string>>& wanted) {
  for (const auto& [key, value] : wanted) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

std::string labels_text(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out;
  for (const auto& [key, value] : labels) out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, value);
  return out;
}

// Every card cordoned: kubectl cordon, or --cordon.
bool cordoned(const core::Node& n) {
  return !n.devices.empty() && n.cordoned_uuids.size() >= n.devices.size();
}

}  // namespace

void join_node_groups(Scenario& s, NodeGroupsFile file) {
  if (!s.snapshot) throw std::logic_error("join_node_groups needs a snapshot scenario");
  if (!s.node_groups.empty())
    throw InputError(file.source, 0, "node_groups",
                     "the --pods file names node_groups too: give the groups in one place");
  const ClusterSnapshot& snap = *s.snapshot;
  const std::string& source = file.source;
  std::vector<int> group_of(snap.nodes.size(), -1);
  for (size_t gi = 0; gi < file.groups.size(); ++gi) {
    NodeGroupSpec& g = file.groups[gi];
    const std::string f = fmt::format("node_groups[{}]", gi);
    const int line = file.label_lines[gi];
    if (!g.node_labels.empty()) {
      for (size_t n = 0; n < snap.nodes.size() && n < snap.node_labels.size(); ++n) {
        if (!carries(snap.node_labels[n], g.node_labels)) continue;
        if (group_of[n] >= 0)
          throw InputError(
              source, line, f + ".node_labels",
              fmt::format("node '{}' carries the labels of group '{}' and of group '{}': a node "
                          "belongs to one node group",
                          snap.nodes[n].name, file.groups[static_cast<size_t>(group_of[n])].name, g.name));
        group_of[n] = static_cast<int>(gi);
        g.members.push_back(n);
      }
    }
    if (static_cast<int>(g.members.size()) > g.max)
      throw InputError(source, line, f + ".max",
                       fmt::format("group '{}' has {} nodes in the snapshot ({}), above its max {}", g.name,
                                   g.members.size(), labels_text(g.node_labels), g.max));
    if (g.node.cards == 0 && g.node.model.empty()) {
      // No template: CA builds one from a node of the group, a schedulable
      // one first; its copies are new, so uncordoned.
      if (g.members.empty())
        throw InputError(source, line, f + ".template",
                         fmt::format("no node of the snapshot carries {}, so group '{}' needs a template",
                                     labels_text(g.node_labels), g.name));
      size_t pick = g.members.front();
      for (size_t m : g.members)
        if (!cordoned(snap.nodes[m])) {
          pick = m;
          break;
        }
      core::Node prototype = snap.nodes[pick];
      prototype.cordoned_uuids.clear();
      g.node.model = prototype.model;
      g.node.cards = static_cast<int>(prototype.devices.size());
      if (!prototype.devices.empty()) g.node.card_memory_mib = prototype.devices.front().memory_mib;
      g.node.cpu_milli = prototype.capacity.cpu_milli;
      g.node.memory_mib = prototype.capacity.memory_mib;
      g.prototype = std::move(prototype);
    } else if (g.members.empty() && !g.node_labels.empty()) {
      s.snapshot->warnings.push_back(
          fmt::format("{}:{}: {}.node_labels: no node of the snapshot carries {}; "
                      "group '{}' starts with only its template's nodes",
                      source, line, f, labels_text(g.node_labels), g.name));
    }
    // New nodes are <template name>-<i>: no snapshot node may be named so.
    for (const auto& n : snap.nodes)
      if (n.name.rfind(g.node.name + "-", 0) == 0)
        throw InputError(
            source, line, g.prototype ? f + ".name" : f + ".template.name",
            fmt::format("new nodes of group '{}' are named {}-<i>, which the snapshot's node '{}' "
                        "could clash with: rename it",
                        g.name, g.node.name, n.name));
    for (const auto& fg : s.fleet_groups)
      if (fg.node.name == g.node.name)
        throw InputError(source, line, g.prototype ? f + ".name" : f + ".template.name",
                         fmt::format("--add-nodes already names its nodes '{}-<i>'", g.node.name));
  }
  s.node_groups = std::move(file.groups);
  s.autoscaler = file.autoscaler;
}

}  // namespace gpuslice::sim
