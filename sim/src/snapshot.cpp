#include "gpuslice/sim/snapshot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "gpuslice/core/codec/priority_class.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/disruption/budget_facts.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/sim/durations.hpp"
#include "gpuslice/sim/memory_estimate.hpp"
#include "snapshot_budgets.hpp"

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
  p.class_name = doc.priority_class;
  return p;
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
    const bool counts_slots = core::dialects::unit(n.cards_from).counts_slots();
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

}  // namespace

void cordon_all_cards(core::Node& n) {
  n.cordoned_uuids.clear();
  for (const auto& d : n.devices) n.cordoned_uuids.push_back(d.uuid);
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
    docs.push_back(core::codec::pod_document(pod, context, defaults, &snap.warnings));
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
  // Koordinator's Devices, DRA's resource.k8s.io objects: the cards of their
  // nodes, and what DRA pods ask and hold.
  core::dialects::NodeObjects objects;
  std::vector<core::codec::PriorityClassDocument> priority_classes;
  std::vector<core::disruption::BudgetFacts> budgets;
  core::codec::read_kube_objects(
      text, [&](core::codec::KubeObject&& object, const core::codec::ReadContext& context) {
        if (auto* node = std::get_if<core::codec::NodeObject>(&object)) {
          nodes.push_back(core::codec::node_document(*node, context));
          // The codec keeps a registered node's labels out (they say nothing
          // of its cards); --node-groups joins nodes to groups by them.
          if (nodes.back().registered)
            for (const auto& e : node->header.meta.labels.entries)
              if (e.value.is_text()) nodes.back().labels.emplace(e.key, e.value.text);
        } else if (auto* pod = std::get_if<core::codec::PodObject>(&object)) {
          read_pod(*pod, context, defaults, docs, snap);
        } else if (auto* quota = std::get_if<core::codec::ResourceQuotaObject>(&object))
          snap.quotas.push_back(core::codec::namespace_quota(*quota, context, &snap.warnings));
        else if (auto* cls = std::get_if<core::codec::PriorityClassObject>(&object))
          priority_classes.push_back(core::codec::priority_class_document(*cls, context));
        else if (auto* pdb = std::get_if<core::codec::PodDisruptionBudgetObject>(&object)) {
          if (auto f = core::disruption::budget_facts(core::codec::budget_document(*pdb, context), source,
                                                      snap.warnings))
            budgets.push_back(std::move(*f));
        } else
          objects.take(object, context);
      });
  // Pods of a hand-written dump may name a class instead of carrying
  // spec.priority, which the API server would have filled in.
  core::codec::admit_priorities(priority_classes, docs, source, snap.warnings);
  core::dialects::register_nodes(nodes, objects, source, snap.warnings);
  for (core::codec::NodeDocument& nd : nodes) {
    if (cluster.find(nd.node.name))
      throw InputError(source, nd.line, "metadata.name", fmt::format("duplicate node '{}'", nd.node.name));
    if (nd.unschedulable) cordon_all_cards(nd.node);  // kubectl cordon: nothing new lands there
    cluster.add_node(std::move(nd.node));
    snap.node_labels.push_back(std::move(nd.labels));
  }
  nodes.clear();
  if (cluster.size() == 0)
    throw InputError(source, 0, "kind",
                     "no Node objects found (is this `kubectl get nodes,pods -A -o yaml`?)");
  size_t gpu_nodes = 0;
  for (size_t i = 0; i < cluster.size(); ++i) gpu_nodes += cluster.node(i).devices.empty() ? 0 : 1;
  if (gpu_nodes == 0)
    snap.warnings.push_back(
        fmt::format("{}: no node carries hami.io/node-nvidia-register, a Koordinator Device, KAI's GPU "
                    "labels or a HAMi-DRA ResourceSlice: no GPU to "
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
  // Requests in objects printed after the pods (DRA's claims) first: a
  // bound pod holding devices then reads as placed, a pending one as asking.
  std::vector<bool> left_out(docs.size(), false);  // pending, its request unreadable: a MalformedPod
  const std::function<void(size_t, std::string, std::string)> leave_out = [&](size_t i, std::string field,
                                                                              std::string detail) {
    const auto& doc = docs[i];
    MalformedPod m{doc.request.ns + "/" + doc.request.name, source, doc.line, std::move(field),
                   std::move(detail)};
    snap.warnings.push_back(fmt::format(
        "{} (pod '{}' left Pending, the rest runs; --strict refuses the dump)", m.message(), m.name));
    snap.malformed.push_back(std::move(m));
    left_out[i] = true;
  };
  core::dialects::RequestCompletion completion{cluster, docs, objects, source, snap.warnings, leave_out};
  core::dialects::complete_requests(completion);
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
        if (const auto h = core::holding_of(p, doc.request.host))
          cluster.charge(h->node, h->allocation, h->host);
        snap.starting.push_back({doc.request, p.node, {}, kForever, priority_of(doc), true, {}, {}});
        continue;
      case core::PlacedRole::BoundOnly:
      case core::PlacedRole::Hami:
      case core::PlacedRole::Koordinator:
      case core::PlacedRole::Kai:
      case core::PlacedRole::Dra: {
        const bool holds = p.holds();
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
        const core::Holding held = *core::holding_of(p, doc.request.host);  // bound: at least its host
        const core::PodAllocation& allocation = held.allocation;
        if (std::string over = over_capacity(cluster, held.node, allocation, held.host); !over.empty()) {
          snap.warnings.push_back(fmt::format("{}:{}: pod '{}' on node '{}' is not counted: {}", source,
                                              doc.line, name(), cluster.node(p.node).name, over));
          if (holds) ++snap.skipped[kSkipOverCapacity];
          continue;
        }
        cluster.charge(held.node, allocation, held.host);
        StartingPod s;
        s.duration = holds ? duration_of(doc) : kForever;
        s.priority = priority_of(doc);
        s.controlled = doc.meta.controller.has_value();
        s.request = std::move(doc.request);  // read no more
        s.node = p.node;
        s.allocation = allocation;
        snap.starting.push_back(std::move(s));
        if (holds) ++snap.running_gpu_pods;
        continue;
      }
      case core::PlacedRole::Unplaced:
        if (left_out[p.doc]) continue;  // its request could not be read: a MalformedPod
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
    snap.queue.push_back({std::move(docs[q.doc].request),
                          duration,
                          priority_of(docs[q.doc]),
                          docs[q.doc].meta.controller.has_value(),
                          {},
                          {}});
  }
  for (size_t i = 0; i < cluster.size(); ++i) snap.nodes.push_back(cluster.node(i));
  attach_budgets(snap, std::move(budgets));
  return snap;
}

ClusterSnapshot parse_snapshot(std::string_view text, const std::string& source,
                               std::optional<double> assume_duration,
                               const core::codec::RequestDefaults& defaults) {
  return read_snapshot(core::codec::KubeText::from_string(text, source), assume_duration, defaults);
}

ClusterSnapshot load_snapshot(const std::string& path, std::optional<double> assume_duration,
                              const core::codec::RequestDefaults& defaults) {
  guard_read_memory(path);
  return read_snapshot(core::codec::KubeText::from_file(path), assume_duration, defaults);
}

}  // namespace gpuslice::sim
