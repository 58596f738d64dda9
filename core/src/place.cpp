#include "gpuslice/core/place.hpp"

#include <fmt/format.h>

#include <map>
#include <unordered_map>
#include <vector>

#include "codec/fields.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/policy.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/placed_pods.hpp"

namespace gpuslice::core {

namespace {

void check_policy_flag(const std::optional<std::string>& value, const char* flag, bool node) {
  if (!value) return;
  if (node) {
    if (*value != "binpack" && *value != "spread")
      throw InputError("command line", 0, flag,
                       fmt::format("unknown node policy '{}' (binpack, spread)", *value));
    return;
  }
  if (std::string problem = gpu_policy_problem(*value); !problem.empty())
    throw InputError("command line", 0, flag, problem);
}

// Already placed pods, as HAMi's scheduler counts them (read_placed_pods);
// the pod being placed is dropped from the cache first (same UID), as
// Filter's delPod does.
void charge_existing(PlaceOutcome& out, const TextInput& input, const codec::RequestDefaults& defaults) {
  const auto docs = codec::parse_pods(input.text, input.source, defaults);
  for (const PlacedPod& p :
       read_placed_pods(out.cluster, docs, input.source, out.pod.uid, out.warnings, &out.kai_groups)) {
    if (auto h = holding_of(p, docs[p.doc].request.host)) out.cluster.charge(h->node, h->allocation, h->host);
    // HAMi counts the pods its own annotation places (onAddPod).
    if (p.role == PlacedRole::Hami) out.quotas.charge(docs[p.doc].request.ns, quota_use(p.allocation));
  }
}

// Every ResourceQuota of a text (a dump given as --nodes or --existing, or --quotas).
void read_quotas(PlaceOutcome& out, const TextInput& input) {
  for (const NamespaceQuota& q : codec::parse_resource_quotas(input.text, input.source, &out.warnings))
    out.quotas.add(q);
}

}  // namespace

// One placed pod, read as read_placed_pods reads a whole list (the serve
// state's feed hands pods over one at a time).
std::optional<Holding> holding_of(const Cluster& cluster, const codec::PodDocument& doc,
                                  const std::string& source, std::vector<std::string>& warnings) {
  return holding_of(read_placed_pods(cluster, {doc}, source, {}, warnings).front(), doc.request.host);
}

Cluster cluster_of_nodes(const TextInput& input, std::vector<std::string>* warnings) {
  auto nodes = codec::parse_nodes(input.text, input.source, warnings);
  if (nodes.empty()) throw InputError(input.source, 0, "kind", "no Node objects found");
  Cluster cluster;
  for (auto& n : nodes) {
    if (cluster.find(n.node.name))
      throw InputError(input.source, n.line, "metadata.name",
                       fmt::format("duplicate node '{}'", n.node.name));
    cluster.add_node(std::move(n.node));
  }
  return cluster;
}

namespace {

// HAMi's policy steered by the flags, or the registered policy named.
std::unique_ptr<Policy> policy_for(const PlaceRequest& request) {
  if (request.policy && *request.policy != "hami") {
    if (std::string problem = policy_name_problem(*request.policy); !problem.empty())
      throw InputError("command line", 0, "--policy", problem);
    if (request.node_policy)
      throw InputError("command line", 0, "--node-policy",
                       "steers HAMi's policy only; leave out --policy or --node-policy");
    PolicyArgs args;
    if (request.gpu_policy) args.gpu_policy = *request.gpu_policy;
    return make_policy(*request.policy, args);
  }
  HamiPolicyConfig cfg;
  if (request.node_policy) {
    cfg.node_policy = *request.node_policy;
    cfg.override_pod_node_policy = true;
  }
  if (request.gpu_policy) {
    cfg.gpu_policy = *request.gpu_policy;
    cfg.override_pod_gpu_policy = true;
  }
  return std::make_unique<HamiPolicy>(cfg);
}

// What the deciding scheduler writes on the pod it placed, in its dialect.
void record_binding(PlaceOutcome& out, const dialects::DialectUnit& dialect) {
  const auto groups = out.kai_groups.find(*out.decision.node);
  static const std::map<int, std::string> no_groups;
  dialects::Binding b =
      dialect.write_binding({out.cluster.node(*out.decision.node), out.pod, out.decision.allocation,
                             groups == out.kai_groups.end() ? no_groups : groups->second});
  out.allocation_annotation = std::move(b.allocation);
  out.annotations = std::move(b.annotations);
  out.labels = std::move(b.labels);
  out.reservation_pods = std::move(b.reservation_pods);
  out.enforcement = std::move(b.enforcement);
}

}  // namespace

PlaceOutcome place(const PlaceRequest& request) {
  check_policy_flag(request.node_policy, "--node-policy", true);
  check_policy_flag(request.gpu_policy, "--gpu-policy", false);
  auto policy = policy_for(request);
  PlaceOutcome out;
  out.policy = request.policy.value_or("hami");
  out.cluster = cluster_of_nodes(request.nodes, &out.warnings);
  auto pods = codec::parse_pods(request.pod.text, request.pod.source, request.defaults, &out.warnings);
  if (pods.size() != 1)
    throw InputError(request.pod.source, pods.empty() ? 0 : pods[1].line, "kind",
                     fmt::format("expected exactly one Pod, found {}", pods.size()));
  out.pod = std::move(pods.front().request);
  const dialects::DialectUnit& dialect = dialects::unit(policy->dialect());
  if (auto problem = dialect.translate_request(out.pod))
    throw InputError(request.pod.source, pods.front().line, problem->field,
                     fmt::format("cannot be said to {}: {}", out.policy, problem->why));
  if (request.existing) charge_existing(out, *request.existing, request.defaults);
  read_quotas(out, request.nodes);
  if (request.existing && request.existing->source != request.nodes.source)
    read_quotas(out, *request.existing);
  if (request.quotas) read_quotas(out, *request.quotas);

  Scheduler scheduler;
  // HAMi's quota check is HAMi's: another scheduler's fit knows none.
  if (dialect.hami_quotas()) scheduler.set_quotas(&out.quotas);
  out.decision = scheduler.place(out.cluster, out.pod, *policy, Detail::Full);
  if (out.decision.placed()) {
    record_binding(out, dialect);
  } else if (dialect.hami_quotas()) {  // shortfall() measures in HAMi's terms
    out.shortfall = shortfall(out.cluster, out.pod);
    if (std::string q = quota_shortfall(out.cluster, out.quotas, out.pod); !q.empty())
      out.shortfall = out.shortfall.empty() ? q : q + "; " + out.shortfall;
  }
  return out;
}

QuotaUse most_quota_use(const PodRequest& pod, int64_t largest_card_mib) {
  QuotaUse most;
  for (size_t i = 0; i < pod.container_count(); ++i) {
    const auto& c = pod.container_at(i);
    if (!c.wants_devices()) continue;
    most.memory_mib += int64_t{c.count} * c.memory_on(largest_card_mib);
    most.cores += int64_t{c.count} * std::min<int32_t>(c.cores, 100);
  }
  return most;
}

int64_t largest_card_mib(const Cluster& cluster) {
  int64_t largest = 0;
  for (size_t id = 0; id < cluster.size(); ++id)
    for (const auto& d : cluster.node(id).devices) largest = std::max(largest, d.memory_mib);
  return largest;
}

QuotaUse least_quota_use(const Cluster& cluster, const PodRequest& pod) {
  // The smallest card, an empty one too: a percentage of it is the least.
  int64_t smallest = -1;
  for (size_t id = 0; id < cluster.size(); ++id)
    for (const Device& d : cluster.node(id).devices)
      if (smallest < 0 || d.memory_mib < smallest) smallest = d.memory_mib;
  smallest = std::max<int64_t>(smallest, 0);
  QuotaUse app, init;
  for (size_t i = 0; i < pod.container_count(); ++i) {
    const ContainerRequest& c = pod.container_at(i);
    if (!c.wants_devices()) continue;
    const QuotaUse one{int64_t{c.count} * c.memory_on(smallest),
                       int64_t{c.count} * std::min<int32_t>(c.cores, 100)};
    if (i < pod.init_containers.size()) {
      init.memory_mib = std::max(init.memory_mib, one.memory_mib);
      init.cores = std::max(init.cores, one.cores);
    } else {
      app.memory_mib += one.memory_mib;
      app.cores += one.cores;
    }
  }
  return {std::max(app.memory_mib, init.memory_mib), std::max(app.cores, init.cores)};
}

std::string quota_shortfall(const Cluster& cluster, const QuotaBook& quotas, const PodRequest& pod) {
  const auto headroom = quotas.headroom(pod.ns);
  if (!headroom) return {};
  const QuotaUse least = least_quota_use(cluster, pod);
  const QuotaUse used = quotas.used(pod.ns);
  std::vector<std::string> parts;
  if (const int64_t over = headroom->memory_over(least); over > 0)
    parts.push_back(
        fmt::format("namespace {}'s ResourceQuota {}: the pod counts at least {} MiB, {} of {} are left "
                    "({} over)",
                    pod.ns, kQuotaMemoryKey, least.memory_mib, std::max<int64_t>(0, *headroom->memory_mib),
                    *headroom->memory_mib + used.memory_mib, over));
  if (const int64_t over = headroom->cores_over(least); over > 0)
    parts.push_back(
        fmt::format("namespace {}'s ResourceQuota {}: the pod counts at least {}% cores, {} of {} are "
                    "left ({} over)",
                    pod.ns, kQuotaCoresKey, least.cores, std::max<int64_t>(0, *headroom->cores),
                    *headroom->cores + used.cores, over));
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : "; ") + p;
  return text;
}

std::string shortfall(const Cluster& cluster, const PodRequest& pod) {
  for (size_t c = 0; c < pod.container_count(); ++c) {
    const ContainerRequest& req = pod.container_at(c);
    if (!req.wants_devices()) continue;
    int64_t best_free = -1, needed_at_best = 0;
    int32_t best_cores = 0;
    std::string where;
    // What a card offers this request depends only on its node's shape
    // (vendor, health, memory, cores by card) and its use: the cards' facts
    // are read once per shape, and each node's use from the cluster's flat
    // arrays. Reading every card of 20,000 nodes per refused pod cost more
    // than the simulation.
    struct CardFacts {
      bool eligible = false;
      int64_t memory_mib = 0;
      int32_t cores = 0;
      int64_t needed = 0;
    };
    std::unordered_map<uint32_t, std::vector<CardFacts>> by_shape;
    for (size_t id = 0; id < cluster.size(); ++id) {
      const NodeView view = cluster.view(id);
      auto [facts, fresh] = by_shape.try_emplace(view.shape);
      if (fresh)
        for (size_t i = 0; i < view.device_count(); ++i) {
          const Device& d = view.device(i);
          facts->second.push_back(
              {d.healthy && d.vendor == req.vendor, d.memory_mib, d.cores, req.memory_on(d.memory_mib)});
        }
      const std::vector<CardFacts>& cards = facts->second;
      for (size_t i = 0; i < cards.size(); ++i) {
        const CardFacts& card = cards[i];
        if (!card.eligible) continue;
        const int64_t free = card.memory_mib - view.usage[i].memory_mib;
        if (free - card.needed > best_free - needed_at_best || best_free < 0) {
          best_free = free;
          needed_at_best = card.needed;
          best_cores = card.cores - view.usage[i].cores;
          where = fmt::format("{} on node {}", view.device(i).uuid, cluster.node(id).name);
        }
      }
    }
    if (best_free < 0)
      return fmt::format("needs a {} card; no healthy card of that vendor is registered", req.vendor);
    std::string text = fmt::format(
        "needs {} MiB and {}% cores per card ({} card{}); the best card ({}) has {} MiB and {}% "
        "cores free",
        needed_at_best, req.cores, req.count, req.count == 1 ? "" : "s", where, best_free, best_cores);
    if (req.count > 1) {
      // A multi-card request also fails when cards with room are spread
      // over nodes: say how many one node offers at most.
      size_t most = 0;
      std::string most_at;
      for (size_t id = 0; id < cluster.size(); ++id) {
        const NodeView view = cluster.view(id);
        const size_t with_room = fitting_cards(view, view.usage, pod, req).size();
        if (with_room > most) {
          most = with_room;
          most_at = cluster.node(id).name;
        }
      }
      if (most > 0 && most < static_cast<size_t>(req.count))
        text += fmt::format("; no node has {} cards with room for it (at most {}, on node {})", req.count,
                            most, most_at);
    }
    return text;
  }
  return {};
}

nlohmann::ordered_json to_json(const PlaceOutcome& o) {
  nlohmann::ordered_json j;
  const auto& d = o.decision;
  j["node"] =
      d.placed() ? nlohmann::ordered_json(o.cluster.node(*d.node).name) : nlohmann::ordered_json(nullptr);
  j["score"] = d.placed() ? d.score : 0.0;
  j["allocation"] = o.allocation_annotation;
  nlohmann::ordered_json failed = nlohmann::ordered_json::object();
  for (const auto& [id, refusal] : d.failed) failed[o.cluster.node(id).name] = refusal.format();
  j["failed_nodes"] = std::move(failed);
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const auto& e : d.events)
    events.push_back({{"type", e.type}, {"reason", e.reason}, {"message", e.message}});
  j["events"] = std::move(events);
  j["warnings"] = o.warnings;
  if (!o.decision.placed()) j["shortfall"] = o.shortfall;
  // Added with the dialects (docs/dialects.md), after the keys readers know.
  j["policy"] = o.policy;
  nlohmann::ordered_json written = nlohmann::ordered_json::object();
  for (const auto& [k, v] : o.annotations) written[k] = v;
  j["annotations"] = std::move(written);
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const auto& [k, v] : o.labels) labels[k] = v;
  j["labels"] = std::move(labels);
  j["reservation_pods"] = o.reservation_pods;
  j["enforcement"] = o.enforcement;
  return j;
}

std::string to_text(const PlaceOutcome& o) {
  const auto& d = o.decision;
  std::string out;
  if (d.placed()) {
    const Node& node = o.cluster.node(*d.node);
    // A registration without indices (HAMi omits a zero one, hand-written ones
    // often give none) would show "card 0" for every card: number by position then.
    bool distinct_indices = true;
    for (size_t i = 0; i < node.devices.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        distinct_indices = distinct_indices && node.devices[i].index != node.devices[j].index;
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
        out += fmt::format("  {}: card {} {} ({}): {} of {} MiB, {}% cores\n", label,
                           distinct_indices ? dev.index : g.device, dev.uuid, dev.type, g.memory_mib,
                           dev.memory_mib, g.cores);
      }
    }
    for (const auto& [k, v] : o.annotations) out += fmt::format("  annotation {}: {}\n", k, v);
    for (const auto& [k, v] : o.labels) out += fmt::format("  label {}: {}\n", k, v);
    for (const auto& pod : o.reservation_pods) {
      out += "  reservation pod:\n";
      for (const auto& line : codec::fields::split(pod, '\n'))
        if (!line.empty()) out += fmt::format("    {}\n", line);
    }
    if (!o.enforcement.empty()) out += fmt::format("  enforcement: {}\n", o.enforcement);
  } else {
    out += fmt::format("pod {}/{} fits no node\n", o.pod.ns, o.pod.name);
    if (!o.shortfall.empty()) out += fmt::format("  {}\n", o.shortfall);
  }
  if (!d.failed.empty()) {
    out += "nodes that do not fit:\n";
    for (const auto& [id, refusal] : d.failed)
      out += fmt::format("  {}: {}\n", o.cluster.node(id).name, refusal.format());
  }
  out += "events:\n";
  for (const auto& e : d.events) out += fmt::format("  {:<8} {:<17} {}\n", e.type, e.reason, e.message);
  return out;
}

}  // namespace gpuslice::core
