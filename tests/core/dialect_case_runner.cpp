// Koordinator's and KAI's conformance cases (tests/core/data/koordinator.yaml,
// kai.yaml; format in data/README.md): each case's shorthand is written out
// as the manifests a cluster holds (Nodes, Device CRs, Pods with their
// annotations and labels) and placed through core::place, as
// `gpuslice place --policy` places them.
#include "dialect_case_runner.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/kai/codec.hpp"
#include "gpuslice/core/dialects/koordinator/codec.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/place.hpp"

namespace gpuslice::testing {

using namespace gpuslice::core;

namespace {

std::string text(const YAML::Node& n) { return n.as<std::string>(); }

void emit_map(YAML::Emitter& out, const char* key, const YAML::Node& map) {
  if (!map) return;
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (auto it = map.begin(); it != map.end(); ++it)
    out << YAML::Key << text(it->first) << YAML::Value << YAML::DoubleQuoted << text(it->second);
  out << YAML::EndMap;
}

// One container named `name` asking `resources` as both requests and limits.
void emit_container(YAML::Emitter& out, const std::string& name, const YAML::Node& resources) {
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
  if (resources && resources.size() > 0) {
    out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
    emit_map(out, "limits", resources);
    emit_map(out, "requests", resources);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

struct PodText {
  std::string name, ns = "default", node;
  YAML::Node labels, annotations;
  std::vector<YAML::Node> containers;  // resources per container
  std::string phase;
};

std::string pod_yaml(const PodText& p) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind"
      << YAML::Value << "Pod";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << p.name << YAML::Key << "namespace" << YAML::Value << p.ns;
  emit_map(out, "labels", p.labels);
  emit_map(out, "annotations", p.annotations);
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  if (!p.node.empty()) out << YAML::Key << "nodeName" << YAML::Value << p.node;
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq;
  if (p.containers.empty()) emit_container(out, "main", YAML::Node());
  for (size_t i = 0; i < p.containers.size(); ++i)
    emit_container(out, i == 0 ? "main" : fmt::format("c{}", i), p.containers[i]);
  out << YAML::EndSeq << YAML::EndMap;
  if (!p.phase.empty())
    out << YAML::Key << "status" << YAML::Value << YAML::BeginMap << YAML::Key << "phase" << YAML::Value
        << p.phase << YAML::EndMap;
  out << YAML::EndMap;
  return out.c_str();
}

// A Node with host capacity and labels.
void emit_node(YAML::Emitter& out, const YAML::Node& n, const YAML::Node& extra_labels,
               const std::optional<int64_t>& gpus) {
  out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind"
      << YAML::Value << "Node";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << text(n["name"]);
  YAML::Node labels = n["labels"] ? YAML::Clone(n["labels"]) : YAML::Node(YAML::NodeType::Map);
  if (extra_labels)
    for (auto it = extra_labels.begin(); it != extra_labels.end(); ++it) labels[text(it->first)] = it->second;
  if (labels.size() > 0) emit_map(out, "labels", labels);
  out << YAML::EndMap;
  out << YAML::Key << "status" << YAML::Value << YAML::BeginMap << YAML::Key << "allocatable" << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "cpu" << YAML::Value << YAML::DoubleQuoted << (n["cpu"] ? text(n["cpu"]) : "64");
  out << YAML::Key << "memory" << YAML::Value << (n["memory"] ? text(n["memory"]) : "256Gi");
  if (gpus)
    out << YAML::Key << "nvidia.com/gpu" << YAML::Value << YAML::DoubleQuoted << std::to_string(*gpus);
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

// ---- Koordinator --------------------------------------------------------

// The objects of a fleet as a v1 List (what `kubectl get -o yaml` prints).
void begin_list(YAML::Emitter& out) {
  out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind"
      << YAML::Value << "List" << YAML::Key << "items" << YAML::Value << YAML::BeginSeq;
}
void end_list(YAML::Emitter& out) { out << YAML::EndSeq << YAML::EndMap; }

std::string koordinator_nodes(const YAML::Node& nodes) {
  YAML::Emitter out;
  begin_list(out);
  for (const auto& n : nodes) {
    emit_node(out, n, YAML::Node(), std::nullopt);
    if (!n["gpus"]) continue;
    out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "scheduling.koordinator.sh/v1alpha1"
        << YAML::Key << "kind" << YAML::Value << "Device";
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
        << text(n["name"]);
    emit_map(out, "labels", n["device_labels"]);
    if (n["partitions"]) {
      out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key
          << std::string(codec::kKoordPartitions) << YAML::Value << YAML::SingleQuoted
          << text(n["partitions"]) << YAML::EndMap;
    }
    out << YAML::EndMap << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "devices"
        << YAML::Value << YAML::BeginSeq;
    for (const auto& g : n["gpus"]) {
      out << YAML::BeginMap << YAML::Key << "type" << YAML::Value << "gpu";
      if (g["id"]) out << YAML::Key << "id" << YAML::Value << text(g["id"]);
      out << YAML::Key << "minor" << YAML::Value << text(g["minor"]);
      out << YAML::Key << "health" << YAML::Value << (g["health"] ? g["health"].as<bool>() : true);
      out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
      out << YAML::Key << "koordinator.sh/gpu-core" << YAML::Value << YAML::DoubleQuoted
          << (g["core"] ? text(g["core"]) : "100");
      out << YAML::Key << "koordinator.sh/gpu-memory" << YAML::Value << text(g["memory"]);
      out << YAML::Key << "koordinator.sh/gpu-memory-ratio" << YAML::Value << YAML::DoubleQuoted << "100";
      out << YAML::EndMap;
      if (g["pcie"])
        out << YAML::Key << "topology" << YAML::Value << YAML::BeginMap << YAML::Key << "socketID"
            << YAML::Value << (g["numa"] ? text(g["numa"]) : "0") << YAML::Key << "nodeID" << YAML::Value
            << (g["numa"] ? text(g["numa"]) : "0") << YAML::Key << "pcieID" << YAML::Value
            << YAML::DoubleQuoted << text(g["pcie"]) << YAML::EndMap;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  }
  end_list(out);
  return out.c_str();
}

// device-allocated from {minor, core, ratio, memory} entries.
std::string device_allocated(const YAML::Node& gpus) {
  std::vector<std::string> entries;
  for (const auto& g : gpus) {
    std::vector<std::string> res;
    if (g["core"]) res.push_back(fmt::format("\"koordinator.sh/gpu-core\":\"{}\"", text(g["core"])));
    if (g["memory"]) res.push_back(fmt::format("\"koordinator.sh/gpu-memory\":\"{}\"", text(g["memory"])));
    if (g["ratio"])
      res.push_back(fmt::format("\"koordinator.sh/gpu-memory-ratio\":\"{}\"", text(g["ratio"])));
    entries.push_back(
        fmt::format("{{\"minor\":{},\"resources\":{{{}}}}}", text(g["minor"]), fmt::join(res, ",")));
  }
  return fmt::format("{{\"gpu\":[{}]}}", fmt::join(entries, ","));
}

std::string koordinator_existing(const YAML::Node& existing) {
  std::string out;
  int i = 0;
  for (const auto& e : existing) {
    PodText p;
    p.name = fmt::format("existing-{}", i++);
    p.node = text(e["node"]);
    p.phase = e["phase"] ? text(e["phase"]) : "Running";
    p.annotations = YAML::Node(YAML::NodeType::Map);
    p.annotations[std::string(codec::kKoordDeviceAllocated)] =
        e["allocated"] ? text(e["allocated"]) : device_allocated(e["gpus"]);
    out += "---\n" + pod_yaml(p) + "\n";
  }
  return out;
}

// ---- KAI ----------------------------------------------------------------

std::string kai_nodes(const YAML::Node& nodes) {
  YAML::Emitter out;
  begin_list(out);
  for (const auto& n : nodes) {
    YAML::Node labels(YAML::NodeType::Map);
    std::optional<int64_t> gpus;
    if (n["gpus"]) {
      gpus = n["gpus"].as<int64_t>();
      labels[std::string(codec::kGfdGpuCount)] = text(n["gpus"]);
      labels[std::string(codec::kGfdGpuMemory)] = text(n["gpu_memory"]);
    }
    emit_node(out, n, labels, gpus);
  }
  end_list(out);
  return out.c_str();
}

std::string kai_existing(const YAML::Node& existing) {
  std::string out;
  int i = 0;
  for (const auto& e : existing) {
    PodText p;
    p.name = fmt::format("existing-{}", i++);
    p.node = text(e["node"]);
    p.phase = "Running";
    p.labels = YAML::Node(YAML::NodeType::Map);
    p.annotations = YAML::Node(YAML::NodeType::Map);
    if (e["reservation"]) {
      p.ns = std::string(codec::kKaiReservationNamespace);
      p.labels["app"] = std::string(codec::kKaiReservationNamespace);
      p.labels[std::string(codec::kKaiGroupLabel)] = text(e["reservation"]);
      if (e["card"])
        p.annotations[std::string(codec::kKaiGpuIndexAnnotation)] =
            fmt::format("{}-gpu{}", text(e["node"]), text(e["card"]));
      YAML::Node r;
      r["nvidia.com/gpu"] = "1";
      p.containers.push_back(r);
    } else if (e["whole"]) {
      YAML::Node r;
      r["nvidia.com/gpu"] = text(e["whole"]);
      p.containers.push_back(r);
    } else if (e["group"]) {
      p.labels[std::string(codec::kKaiGroupLabel)] = text(e["group"]);
      if (e["fraction"]) p.annotations[std::string(codec::kKaiGpuFraction)] = text(e["fraction"]);
      if (e["gpu_memory"]) p.annotations[std::string(codec::kKaiGpuMemory)] = text(e["gpu_memory"]);
    }
    if (e["cpu"]) {
      YAML::Node r = p.containers.empty() ? YAML::Node(YAML::NodeType::Map) : p.containers.front();
      r["cpu"] = text(e["cpu"]);
      if (p.containers.empty()) p.containers.push_back(r);
    }
    out += "---\n" + pod_yaml(p) + "\n";
  }
  return out;
}

PodText case_pod(const YAML::Node& pod) {
  PodText p;
  p.name = pod["name"] ? text(pod["name"]) : "case-pod";
  if (pod["labels"]) p.labels.reset(pod["labels"]);
  if (pod["annotations"]) p.annotations.reset(pod["annotations"]);
  if (pod["containers"])
    for (const auto& c : pod["containers"]) p.containers.push_back(c);
  else if (pod["resources"])
    p.containers.push_back(pod["resources"]);
  return p;
}

}  // namespace

DialectCaseFile load_dialect_cases(const std::string& file_name) {
  DialectCaseFile f;
  f.path = std::string(GPUSLICE_TEST_DATA) + "/" + file_name;
  const YAML::Node root = YAML::LoadFile(f.path);
  f.policy = text(root["policy"]);
  for (const auto& c : root["cases"]) f.cases.push_back(c);
  REQUIRE(!f.cases.empty());
  return f;
}

void run_dialect_case(const DialectCaseFile& file, const YAML::Node& c) {
  const std::string name = text(c["name"]);
  INFO("case: " << name);
  const std::string policy = c["policy"] ? text(c["policy"]) : file.policy;
  const bool kai = policy.rfind("kai", 0) == 0;
  PlaceRequest request;
  request.policy = policy;
  request.nodes = {kai ? kai_nodes(c["nodes"]) : koordinator_nodes(c["nodes"]), name + " nodes"};
  request.pod = {pod_yaml(case_pod(c["pod"])), name + " pod"};
  if (c["existing"])
    request.existing = TextInput{kai ? kai_existing(c["existing"]) : koordinator_existing(c["existing"]),
                                 name + " existing"};
  INFO("nodes:\n" << request.nodes.text);
  INFO("pod:\n" << request.pod.text);
  if (request.existing) INFO("existing:\n" << request.existing->text);
  const YAML::Node want = c["expect"];
  REQUIRE(want);
  if (want["error"]) {
    try {
      place(request);
      FAIL("expected an input error: " << text(want["error"]));
    } catch (const InputError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(text(want["error"])));
    }
    return;
  }
  const PlaceOutcome o = place(request);
  const Decision& d = o.decision;
  if (want["node"]) {
    if (want["node"].IsNull()) {
      CHECK_FALSE(d.placed());
    } else {
      REQUIRE(d.placed());
      CHECK(o.cluster.node(*d.node).name == text(want["node"]));
    }
  }
  if (want["gpus"]) {
    REQUIRE(d.placed());
    std::vector<int> got;
    for (const auto& container : d.allocation.containers)
      for (const auto& g : container)
        got.push_back(o.cluster.node(*d.node).devices[static_cast<size_t>(g.device)].index);
    CHECK(got == want["gpus"].as<std::vector<int>>());
  }
  auto written = [&](std::string_view key) -> std::string {
    for (const auto& [k, v] : o.annotations)
      if (k == key) return v;
    return {};
  };
  if (want["annotation"]) CHECK(written(codec::kKoordDeviceAllocated) == text(want["annotation"]));
  if (want["score"]) CHECK(d.score == Approx(want["score"].as<double>()).epsilon(1e-9));
  if (want["failed"]) {
    std::map<std::string, std::string> got;
    for (const auto& [id, refusal] : d.failed) got[o.cluster.node(id).name] = refusal.format();
    CHECK(got == want["failed"].as<std::map<std::string, std::string>>());
  }
  if (want["received"]) CHECK(written(codec::kKaiReceivedType) == text(want["received"]));
  if (want["groups"]) {
    // Group names as the labels give them; "new" stands for a group the
    // node did not have (its name is derived, and a reservation pod opens it).
    std::vector<std::string> got;
    for (const auto& [k, v] : o.labels) {
      bool known = false;
      for (const auto& [node, cards] : o.kai_groups)
        for (const auto& [card, group] : cards) known = known || group == v;
      got.push_back(known ? v : "new");
    }
    CHECK(got == want["groups"].as<std::vector<std::string>>());
  }
  if (want["reservation_pods"]) CHECK(o.reservation_pods.size() == want["reservation_pods"].as<size_t>());
  if (want["group_label"]) {
    // runai-gpu-group for one device, runai-gpu-group/<group> per device of
    // a multi-device share (resource_reservation.go updatePodGPUGroup).
    for (const auto& [k, v] : o.labels)
      CHECK(k == (text(want["group_label"]) == "per-group" ? std::string(codec::kKaiGroupLabel) + "/" + v
                                                           : std::string(codec::kKaiGroupLabel)));
  }
  // Whatever the case asserts, the decision must keep every card within
  // capacity in the dialect's own terms once committed (or pass it as the
  // case says, where the dialect itself lets it).
  if (d.placed()) {
    Cluster after = o.cluster;
    auto p = make_policy(policy);
    Scheduler::commit(after, o.pod, d, *p);
    const std::string over = p->device_fit()->over_capacity(after.view(*d.node));
    CHECK(over == (want["over_capacity"] ? text(want["over_capacity"]) : std::string()));
  }
}

}  // namespace gpuslice::testing
