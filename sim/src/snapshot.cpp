#include "gpuslice/sim/snapshot.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

#include "gpuslice/core/codec/allocation_annotation.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {

using core::InputError;

namespace {

// A listed pod's priority as the API server filled it in (the Priority
// admission plugin writes spec.priority from priorityClassName, so a dump
// of a real cluster carries the number on every pod).
PodPriority priority_of(const core::codec::PodDocument& doc) {
  PodPriority p;
  p.value = doc.priority;
  p.preempt_never = doc.preempt_never;
  return p;
}

std::optional<double> number_prefix(std::string_view& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return v;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Whether the pod's grants (and host demand) still fit the node as
// registered now: a card re-registered smaller than what it hands out
// would break every later fit, so such a pod is left out with a warning.
std::string over_capacity(const core::Cluster& cluster, size_t node, const core::PodAllocation& allocation,
                          const core::HostResources& host) {
  const core::Node& n = cluster.node(node);
  const auto use = cluster.usage(node);
  for (const auto& c : core::effective_charges(allocation)) {
    const auto& d = n.devices[static_cast<size_t>(c.device)];
    const auto& u = use[static_cast<size_t>(c.device)];
    // Koordinator and KAI count no slots: a card of theirs takes any number of pods.
    const bool counts_slots = n.cards_from == core::Dialect::Hami;
    if ((counts_slots && u.slots + c.usage.slots > d.slots) ||
        u.memory_mib + c.usage.memory_mib > d.memory_mib || u.cores + c.usage.cores > d.cores)
      return fmt::format("card {} would hold {} slots, {} MiB, {}% cores of {}, {} MiB, {}%", d.uuid,
                         u.slots + c.usage.slots, u.memory_mib + c.usage.memory_mib, u.cores + c.usage.cores,
                         d.slots, d.memory_mib, d.cores);
  }
  const auto& h = cluster.host_used(node);
  if (n.capacity.cpu_milli > 0 && h.cpu_milli + host.cpu_milli > n.capacity.cpu_milli)
    return fmt::format("the node's CPU would hold {}m of {}m", h.cpu_milli + host.cpu_milli,
                       n.capacity.cpu_milli);
  if (n.capacity.memory_mib > 0 && h.memory_mib + host.memory_mib > n.capacity.memory_mib)
    return fmt::format("the node's memory would hold {} MiB of {} MiB", h.memory_mib + host.memory_mib,
                       n.capacity.memory_mib);
  return {};
}

void cordon_all_cards(core::Node& n) {
  n.cordoned_uuids.clear();
  for (const auto& d : n.devices) n.cordoned_uuids.push_back(d.uuid);
}

}  // namespace

std::optional<double> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  std::string_view rest = text;
  bool any = false;
  while (!rest.empty()) {
    auto v = number_prefix(rest);
    if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
    double unit = 1;
    if (rest.empty()) {
      if (any) return std::nullopt;  // "1h30": a number without its unit after a unit
    } else if (rest.starts_with("ms")) {
      unit = 0.001;
      rest.remove_prefix(2);
    } else {
      switch (rest.front()) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        default:
          return std::nullopt;
      }
      rest.remove_prefix(1);
    }
    total += *v * unit;
    any = true;
  }
  if (!(total > 0) || !std::isfinite(total)) return std::nullopt;
  return total;
}

std::optional<double> parse_timestamp(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    if (at + n > t.size()) return std::nullopt;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2),
             s = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !s || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') ||
      t[13] != ':' || t[16] != ':' || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
      *s > 60)
    return std::nullopt;
  double seconds =
      static_cast<double>(days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d))) *
          86400 +
      *h * 3600 + *mi * 60 + *s;
  size_t at = 19;
  if (at < t.size() && t[at] == '.') {
    double scale = 0.1;
    ++at;
    const size_t start = at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') {
      seconds += (t[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == start) return std::nullopt;
  }
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z') && at + 1 == t.size()) return seconds;
  if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && t[at + 3] == ':') {
    const auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
    if (!oh || !om) return std::nullopt;
    const double offset = *oh * 3600 + *om * 60;
    return t[at] == '+' ? seconds - offset : seconds + offset;
  }
  return std::nullopt;
}

std::string MalformedPod::message() const { return InputError(file, line, field, detail).what(); }

void MalformedPod::raise() const { throw InputError(file, line, field, detail); }

namespace {
// A pod of the dump; a pending one (bound to no node) whose request cannot
// be read is left out with its reason, as HAMi leaves it Pending and
// schedules the rest. A bound one holds capacity: not reading it would
// miscount its node, so it stays bad input.
void read_pod(const core::codec::PodObject& pod, const core::codec::ReadContext& context,
              const core::codec::RequestDefaults& defaults, std::vector<core::codec::PodDocument>& docs,
              ClusterSnapshot& snap) {
  try {
    docs.push_back(core::codec::pod_document(pod, context, defaults));
  } catch (const InputError& e) {
    const bool pending =
        pod.node_name.text.empty() && (pod.phase.text.empty() || pod.phase.text == "Pending");
    if (!pending) throw;
    const std::string ns =
        pod.header.meta.namespace_name.text.empty() ? "default" : pod.header.meta.namespace_name.text;
    MalformedPod m{ns + "/" + pod.header.meta.name.text, e.file(), e.line(), e.field(), e.detail()};
    snap.warnings.push_back(fmt::format(
        "{} (pod '{}' left Pending, the rest runs; --strict refuses the dump)", m.message(), m.name));
    snap.malformed.push_back(std::move(m));
  }
}
}  // namespace

ClusterSnapshot read_snapshot(const core::codec::KubeText& text, std::optional<double> assume_duration,
                              const core::codec::RequestDefaults& defaults) {
  const std::string& source = text.source();
  ClusterSnapshot snap;
  snap.source = source;
  core::Cluster cluster;
  std::vector<core::codec::PodDocument> docs;
  std::vector<core::codec::NodeDocument> nodes;
  std::vector<core::codec::DeviceDocument> devices;  // Koordinator's: the cards of their nodes
  core::codec::read_kube_objects(
      text, [&](core::codec::KubeObject&& object, const core::codec::ReadContext& context) {
        if (auto* node = std::get_if<core::codec::NodeObject>(&object))
          nodes.push_back(core::codec::node_document(*node, context));
        else if (auto* pod = std::get_if<core::codec::PodObject>(&object))
          read_pod(*pod, context, defaults, docs, snap);
        else if (auto* device = std::get_if<core::codec::DeviceObject>(&object))
          devices.push_back(core::codec::device_document(*device, context));
        else if (auto* quota = std::get_if<core::codec::ResourceQuotaObject>(&object))
          snap.quotas.push_back(core::codec::namespace_quota(*quota, context, &snap.warnings));
      });
  core::codec::complete_dialect_nodes(nodes, devices, source, snap.warnings);
  for (core::codec::NodeDocument& nd : nodes) {
    if (cluster.find(nd.node.name))
      throw InputError(source, nd.line, "metadata.name", fmt::format("duplicate node '{}'", nd.node.name));
    if (nd.unschedulable) cordon_all_cards(nd.node);  // kubectl cordon: nothing new lands there
    cluster.add_node(std::move(nd.node));
  }
  nodes.clear();
  if (cluster.size() == 0)
    throw InputError(source, 0, "kind",
                     "no Node objects found (is this `kubectl get nodes,pods -A -o yaml`?)");
  size_t gpu_nodes = 0;
  for (size_t i = 0; i < cluster.size(); ++i) gpu_nodes += cluster.node(i).devices.empty() ? 0 : 1;
  if (gpu_nodes == 0)
    snap.warnings.push_back(
        fmt::format("{}: no node carries hami.io/node-nvidia-register, a Koordinator Device or KAI's GPU "
                    "labels: no GPU to "
                    "place on",
                    source));

  auto duration_of = [&](const core::codec::PodDocument& doc) -> double {
    if (doc.expected_duration.empty()) return assume_duration.value_or(kForever);
    const auto d = parse_duration(doc.expected_duration);
    if (!d)
      throw InputError(
          source, doc.expected_duration_line,
          std::string("metadata.annotations.") + std::string(core::codec::kExpectedDurationAnnotation),
          fmt::format("'{}' is not a duration (write 45m, 2h30m, 3d or seconds)", doc.expected_duration));
    return *d;
  };
  struct Queued {
    double created;
    std::string key;
    size_t doc;
  };
  // What each pod holds is read first: KAI's groups are among its labels.
  const std::vector<core::PlacedPod> placed =
      core::read_placed_pods(cluster, docs, source, {}, snap.warnings);
  // Every pod as listed, before the requests below are moved out.
  snap.listed.reserve(docs.size());
  for (auto& d : docs)
    snap.listed.push_back({d.request.ns + "/" + d.request.name, d.phase, std::move(d.meta)});
  std::vector<Queued> queue;
  for (const core::PlacedPod& p : placed) {
    auto& doc = docs[p.doc];
    const bool gpu = doc.request.wants_devices();
    auto name = [&] { return doc.request.ns + "/" + doc.request.name; };
    switch (p.role) {
      case core::PlacedRole::Terminated:
        ++snap.skipped[doc.phase == "Succeeded" ? kSkipSucceeded : kSkipFailed];
        continue;
      case core::PlacedRole::UnknownNode:
        ++snap.skipped[kSkipUnknownNode];
        continue;
      case core::PlacedRole::SameUid:
        continue;  // no pod is being placed here
      case core::PlacedRole::KaiReservation:
        ++snap.skipped[kSkipKaiReservation];  // its CPU and memory still count on its node
        cluster.charge(p.node, {}, doc.request.host);
        snap.starting.push_back({doc.request, p.node, {}, kForever, priority_of(doc), true});
        continue;
      case core::PlacedRole::BoundOnly:
      case core::PlacedRole::Hami:
      case core::PlacedRole::Koordinator:
      case core::PlacedRole::Kai: {
        if (p.role == core::PlacedRole::BoundOnly && gpu) {
          // Bound with GPU limits but no HAMi grant: another device plugin's
          // pod, or HAMi's annotations stripped. HAMi counts nothing for it.
          snap.warnings.push_back(
              fmt::format("{}:{}: pod '{}' asks HAMi resources and runs on '{}' without {}: "
                          "its GPUs are not counted",
                          source, doc.line, name(), doc.node_name, core::codec::kAllocatedAnnotation));
          ++snap.skipped[kSkipNotHami];
        } else if (p.role == core::PlacedRole::BoundOnly) {
          ++snap.skipped[kSkipNoGpu];  // its CPU and memory still count on its node
        }
        const core::PodAllocation allocation = p.holds() ? p.allocation : core::PodAllocation{};
        if (std::string over = over_capacity(cluster, p.node, allocation, doc.request.host); !over.empty()) {
          snap.warnings.push_back(fmt::format("{}:{}: pod '{}' on node '{}' is not counted: {}", source,
                                              doc.line, name(), cluster.node(p.node).name, over));
          if (p.holds()) ++snap.skipped[kSkipOverCapacity];
          continue;
        }
        cluster.charge(p.node, allocation, doc.request.host);
        StartingPod s;
        s.duration = p.holds() ? duration_of(doc) : kForever;
        s.priority = priority_of(doc);
        s.controlled = doc.meta.controller.has_value();
        s.request = std::move(doc.request);  // read no more
        s.node = p.node;
        s.allocation = allocation;
        snap.starting.push_back(std::move(s));
        if (p.holds()) ++snap.running_gpu_pods;
        continue;
      }
      case core::PlacedRole::Unplaced:
        if (!gpu) {
          ++snap.skipped[kSkipNoGpu];
          continue;
        }
        if (!doc.phase.empty() && doc.phase != "Pending") {
          snap.warnings.push_back(
              fmt::format("{}:{}: pod '{}' asks HAMi resources, is {} and bound to no known "
                          "node: left out",
                          source, doc.line, name(), doc.phase));
          ++snap.skipped[doc.node_name.empty() ? kSkipNotHami : kSkipUnknownNode];
          continue;
        }
        double created = -std::numeric_limits<double>::infinity();  // none given: first
        if (!doc.created.empty()) {
          const auto t = parse_timestamp(doc.created);
          if (!t)
            throw InputError(source, doc.created_line, "metadata.creationTimestamp",
                             fmt::format("'{}' is not an RFC 3339 time (2024-05-10T12:01:44Z)", doc.created));
          created = *t;
        }
        queue.push_back({created, name(), p.doc});
        continue;
    }
  }
  std::stable_sort(queue.begin(), queue.end(), [](const Queued& a, const Queued& b) {
    return a.created != b.created ? a.created < b.created : a.key < b.key;
  });
  for (const auto& q : queue) {
    const double duration = duration_of(docs[q.doc]);
    snap.queue.push_back({std::move(docs[q.doc].request), duration, priority_of(docs[q.doc]),
                          docs[q.doc].meta.controller.has_value()});
  }
  for (size_t i = 0; i < cluster.size(); ++i) snap.nodes.push_back(cluster.node(i));
  return snap;
}

ClusterSnapshot parse_snapshot(std::string_view text, const std::string& source,
                               std::optional<double> assume_duration,
                               const core::codec::RequestDefaults& defaults) {
  return read_snapshot(core::codec::KubeText::from_string(text, source), assume_duration, defaults);
}

ClusterSnapshot load_snapshot(const std::string& path, std::optional<double> assume_duration,
                              const core::codec::RequestDefaults& defaults) {
  return read_snapshot(core::codec::KubeText::from_file(path), assume_duration, defaults);
}

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
    const std::string text = core::codec::read_text_file(*spec.pods);
    s = parse_scenario(text, *spec.pods, std::filesystem::path(*spec.pods).parent_path().string(), true);
    const YAML::Node root = core::codec::load_yaml_document(text, *spec.pods);
    fleet_replaced = root.IsMap() && root["fleet"];
    queue_given = root.IsMap() && root["queue"];
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
  set_fleet_counts(s, {}, {});
  return s;
}

}  // namespace gpuslice::sim
