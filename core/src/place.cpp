#include "gpuslice/core/place.hpp"

#include <fmt/format.h>

#include "gpuslice/core/codec/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policies/hami.hpp"

namespace gpuslice::core {

namespace {

void check_policy_flag(const std::optional<std::string>& value, const char* flag, bool node) {
  if (!value) return;
  GpuPolicy parsed = GpuPolicy::parse(*value);
  const bool ok = node ? (*value == "binpack" || *value == "spread")
                       : (*value == "binpack" || *value == "spread" || *value == "topology-aware" ||
                          *value == "mutex" || *value == "numa" || parsed.chain);
  if (!ok) throw InputError("command line", 0, flag, fmt::format("unknown policy '{}'", *value));
}

void charge_existing(Cluster& cluster, const TextInput& input, const codec::RequestDefaults& defaults) {
  for (const auto& doc : codec::parse_pods(input.text, input.source, defaults)) {
    const auto where = [&](const char* field, const std::string& what, int line) {
      return InputError(input.source, line ? line : doc.line, field,
                        fmt::format("pod '{}': {}", doc.request.name, what));
    };
    if (doc.assigned_node.empty())
      throw where("metadata.annotations.hami.io/vgpu-node", "a placed pod needs its node", 0);
    auto id = cluster.find(doc.assigned_node);
    if (!id)
      throw where("metadata.annotations.hami.io/vgpu-node",
                  fmt::format("unknown node '{}'", doc.assigned_node), 0);
    PodAllocation allocation;
    try {
      auto text = codec::decode_allocation_text(doc.allocated);
      allocation = codec::resolve_allocation(text, cluster.node(*id), doc.request.init_containers.size());
    } catch (const CodecError& e) {
      throw where("metadata.annotations.hami.io/vgpu-devices-allocated", e.what(), doc.allocated_line);
    }
    cluster.charge(*id, allocation, doc.request.host);
  }
}

}  // namespace

PlaceOutcome place(const PlaceRequest& request) {
  check_policy_flag(request.node_policy, "--node-policy", true);
  check_policy_flag(request.gpu_policy, "--gpu-policy", false);
  PlaceOutcome out;
  auto nodes = codec::parse_nodes(request.nodes.text, request.nodes.source);
  if (nodes.empty()) throw InputError(request.nodes.source, 0, "kind", "no Node objects found");
  for (auto& n : nodes) {
    if (out.cluster.find(n.node.name))
      throw InputError(request.nodes.source, n.line, "metadata.name",
                       fmt::format("duplicate node '{}'", n.node.name));
    out.cluster.add_node(std::move(n.node));
  }
  if (request.existing) charge_existing(out.cluster, *request.existing, request.defaults);

  auto pods = codec::parse_pods(request.pod.text, request.pod.source, request.defaults);
  if (pods.size() != 1)
    throw InputError(request.pod.source, pods.empty() ? 0 : pods[1].line, "kind",
                     fmt::format("expected exactly one Pod, found {}", pods.size()));
  out.pod = std::move(pods.front().request);

  HamiPolicyConfig cfg;
  if (request.node_policy) {
    cfg.node_policy = *request.node_policy;
    cfg.override_pod_node_policy = true;
  }
  if (request.gpu_policy) {
    cfg.gpu_policy = *request.gpu_policy;
    cfg.override_pod_gpu_policy = true;
  }
  HamiPolicy policy(cfg);
  Scheduler scheduler;
  out.decision = scheduler.place(out.cluster, out.pod, policy, Detail::Full);
  if (out.decision.placed())
    out.allocation_annotation =
        codec::encode_allocation(out.decision.allocation, out.cluster.node(*out.decision.node));
  return out;
}

nlohmann::ordered_json to_json(const PlaceOutcome& o) {
  nlohmann::ordered_json j;
  const auto& d = o.decision;
  j["node"] =
      d.placed() ? nlohmann::ordered_json(o.cluster.node(*d.node).name) : nlohmann::ordered_json(nullptr);
  j["score"] = d.placed() ? d.score : 0.0;
  j["allocation"] = o.allocation_annotation;
  nlohmann::ordered_json failed = nlohmann::ordered_json::object();
  for (const auto& [id, reason] : d.failed) failed[o.cluster.node(id).name] = reason;
  j["failed_nodes"] = std::move(failed);
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const auto& e : d.events)
    events.push_back({{"type", e.type}, {"reason", e.reason}, {"message", e.message}});
  j["events"] = std::move(events);
  return j;
}

std::string to_text(const PlaceOutcome& o) {
  const auto& d = o.decision;
  std::string out;
  if (d.placed()) {
    const Node& node = o.cluster.node(*d.node);
    out += fmt::format("pod {}/{} fits node {} (score {:.2f})\n", o.pod.ns, o.pod.name, node.name,
                       static_cast<float>(d.score));
    for (size_t c = 0; c < d.allocation.containers.size(); ++c) {
      const auto& grants = d.allocation.containers[c];
      const auto& req = o.pod.container_at(c);
      std::string label = fmt::format("{}{}", c < d.allocation.init_count ? "init container " : "container ",
                                      req.name.empty() ? std::to_string(c) : req.name);
      if (grants.empty()) {
        out += fmt::format("  {}: no GPU\n", label);
        continue;
      }
      for (const auto& g : grants) {
        const auto& dev = node.devices[static_cast<size_t>(g.device)];
        out += fmt::format("  {}: card {} {} ({}): {} of {} MiB, {}% cores\n", label, dev.index, dev.uuid,
                           dev.type, g.memory_mib, dev.memory_mib, g.cores);
      }
    }
    out += fmt::format("  annotation hami.io/vgpu-devices-allocated: {}\n", o.allocation_annotation);
  } else {
    out += fmt::format("pod {}/{} fits no node\n", o.pod.ns, o.pod.name);
  }
  if (!d.failed.empty()) {
    out += "nodes that do not fit:\n";
    for (const auto& [id, reason] : d.failed)
      out += fmt::format("  {}: {}\n", o.cluster.node(id).name, reason);
  }
  out += "events:\n";
  for (const auto& e : d.events) out += fmt::format("  {:<8} {:<17} {}\n", e.type, e.reason, e.message);
  return out;
}

}  // namespace gpuslice::core
