#include "case_runner.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/dialects/hami/policy.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/scheduler.hpp"

namespace gpuslice::testing {

using namespace gpuslice::core;

CaseFile load_cases(const std::string& file_name) {
  CaseFile f;
  f.path = std::string(GPUSLICE_TEST_DATA) + "/" + file_name;
  YAML::Node root = YAML::LoadFile(f.path);
  for (const auto& c : root["cases"]) f.cases.push_back(c);
  REQUIRE(!f.cases.empty());
  return f;
}

Node build_node(const YAML::Node& spec) {
  Node n;
  n.name = spec["name"].as<std::string>();
  int position = 0;
  for (const auto& c : spec["cards"]) {
    Device d;
    d.uuid = c["uuid"].as<std::string>();
    d.index = c["index"] ? c["index"].as<int>() : position;
    d.type = c["type"] ? c["type"].as<std::string>() : "NVIDIA";
    d.slots = c["slots"] ? c["slots"].as<int32_t>() : 10;
    d.memory_mib = c["memory"].as<int64_t>();
    d.cores = c["cores"] ? c["cores"].as<int32_t>() : 100;
    d.numa = c["numa"] ? c["numa"].as<int>() : 0;
    d.mode = c["mode"] ? c["mode"].as<std::string>() : "hami-core";
    d.healthy = c["healthy"] ? c["healthy"].as<bool>() : true;
    // HAMi v2.10's migProfiles, with its wire names.
    for (const auto& p : c["mig_profiles"]) {
      MigProfile profile;
      profile.name = p["name"].as<std::string>();
      profile.memory_mib = p["memoryMB"].as<int32_t>();
      profile.cores = p["core"].as<int32_t>();
      profile.slice_count = p["sliceCount"].as<uint32_t>();
      for (const auto& pl : p["placements"])
        profile.placements.push_back({pl["start"].as<uint32_t>(), pl["size"].as<uint32_t>()});
      d.mig_profiles.push_back(std::move(profile));
    }
    n.devices.push_back(d);
    ++position;
  }
  if (spec["cordoned"]) n.cordoned_uuids = spec["cordoned"].as<std::vector<std::string>>();
  if (spec["capacity"])
    n.capacity = {spec["capacity"]["cpu"].as<int64_t>(), spec["capacity"]["memory"].as<int64_t>()};
  if (spec["pair_scores"]) {
    n.topology.assign(n.devices.size(), std::vector<int>(n.devices.size(), 0));
    for (auto it = spec["pair_scores"].begin(); it != spec["pair_scores"].end(); ++it)
      for (auto jt = it->second.begin(); jt != it->second.end(); ++jt) {
        size_t a = 0, b = 0;
        for (size_t i = 0; i < n.devices.size(); ++i) {
          if (n.devices[i].uuid == it->first.as<std::string>()) a = i;
          if (n.devices[i].uuid == jt->first.as<std::string>()) b = i;
        }
        n.topology[a][b] = jt->second.as<int>();
      }
  }
  return n;
}

namespace {

// Usage already on a card, as [slots, MiB, cores].
void charge_usage(Cluster& cluster, size_t id, const YAML::Node& spec) {
  const Node& node = cluster.node(id);
  int position = 0;
  for (const auto& c : spec["cards"]) {
    if (c["used"]) {
      auto u = c["used"].as<std::vector<int64_t>>();
      REQUIRE(u.size() == 3);
      // One synthetic app container per slot so slots, memory and cores add up exactly.
      PodAllocation a;
      for (int64_t s = 0; s < u[0]; ++s)
        a.containers.push_back(
            {DeviceGrant{position, s == 0 ? u[1] : 0, s == 0 ? static_cast<int32_t>(u[2]) : 0}});
      cluster.charge(id, a, {});
    }
    // MIG instances already on the card (HAMi's MigAllocationsInUse): their
    // slices only; `used` says what they hold.
    if (c["mig_in_use"]) {
      PodAllocation a;
      for (const auto& pl : c["mig_in_use"])
        a.mig_held.push_back({position, {pl["start"].as<uint32_t>(), pl["size"].as<uint32_t>()}});
      cluster.charge(id, a, {});
    }
    ++position;
  }
  (void)node;
  if (spec["host_used"])
    cluster.charge(id, {},
                   {spec["host_used"]["cpu"].as<int64_t>(), spec["host_used"]["memory"].as<int64_t>()});
}

}  // namespace

// The pod shorthand becomes a real Pod manifest, so the manifest codec and
// HAMi's webhook defaults take part in every case.
std::string pod_manifest(const YAML::Node& pod) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind"
      << YAML::Value << "Pod";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << (pod["name"] ? pod["name"].as<std::string>() : std::string("case-pod"));
  if (pod["annotations"]) out << YAML::Key << "annotations" << YAML::Value << pod["annotations"];
  out << YAML::EndMap << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  auto containers = [&](const char* key, const char* yaml_key) {
    if (!pod[key]) return;
    out << YAML::Key << yaml_key << YAML::Value << YAML::BeginSeq;
    int i = 0;
    for (const auto& c : pod[key]) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << fmt::format("{}-{}", key, i++);
      out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
          << YAML::BeginMap;
      for (auto it = c.begin(); it != c.end(); ++it) {
        const std::string k = it->first.as<std::string>();
        const std::string name = (k == "cpu" || k == "memory") ? k : "nvidia.com/" + k;
        out << YAML::Key << name << YAML::Value << it->second.as<std::string>();
      }
      out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
    }
    out << YAML::EndSeq;
  };
  containers("init", "initContainers");
  containers("containers", "containers");
  out << YAML::EndMap << YAML::EndMap;
  return out.c_str();
}

void run_case(const YAML::Node& c) {
  const std::string name = c["name"].as<std::string>();
  INFO("case: " << name);
  Cluster cluster;
  for (const auto& spec : c["nodes"]) {
    const size_t id = cluster.add_node(build_node(spec));
    charge_usage(cluster, id, spec);
  }
  const std::string manifest = pod_manifest(c["pod"]);
  INFO("pod manifest:\n" << manifest);
  auto pods = codec::parse_pods(manifest, name);
  REQUIRE(pods.size() == 1);
  const PodRequest& pod = pods.front().request;

  HamiPolicyConfig cfg;
  if (c["node_policy"]) {
    cfg.node_policy = c["node_policy"].as<std::string>();
    cfg.override_pod_node_policy = true;
  }
  if (c["gpu_policy"]) {
    cfg.gpu_policy = c["gpu_policy"].as<std::string>();
    cfg.override_pod_gpu_policy = true;
  }
  HamiPolicy policy(cfg);
  Scheduler scheduler;
  // The namespace's ResourceQuota and what its running pods already count.
  QuotaBook quotas;
  if (const YAML::Node q = c["quota"]) {
    const std::string ns = q["namespace"] ? q["namespace"].as<std::string>() : pod.ns;
    QuotaLimits limits;
    if (q["gpumem"]) limits.memory_mib = q["gpumem"].as<int64_t>();
    if (q["gpucores"]) limits.cores = q["gpucores"].as<int64_t>();
    quotas.add_quota(ns, limits);
    if (q["used"]) {
      const auto u = q["used"].as<std::vector<int64_t>>();
      REQUIRE(u.size() == 2);
      quotas.charge(ns, {u[0], u[1]});
    }
    scheduler.set_quotas(&quotas);
  }
  const Decision d = scheduler.place(cluster, pod, policy, Detail::Full);
  const YAML::Node want = c["expect"];
  REQUIRE(want);
  for (const auto& [id, refusal] : d.failed)
    UNSCOPED_INFO("refused by " << cluster.node(id).name << ": " << refusal.format());

  if (want["node"]) {
    if (want["node"].IsNull()) {
      CHECK_FALSE(d.placed());
    } else {
      REQUIRE(d.placed());
      CHECK(cluster.node(*d.node).name == want["node"].as<std::string>());
    }
  }
  if (want["allocation"]) {
    REQUIRE(d.placed());
    CHECK(codec::encode_allocation(d.allocation, cluster.node(*d.node)) ==
          want["allocation"].as<std::string>());
  }
  if (want["mig_allocations"]) {
    REQUIRE(d.placed());
    CHECK(codec::encode_mig_allocations(d.allocation, cluster.node(*d.node)) ==
          want["mig_allocations"].as<std::string>());
  }
  if (want["score"]) {
    REQUIRE(d.placed());
    CHECK(d.score == Approx(want["score"].as<double>()).epsilon(1e-6));
  }
  if (want["failed"]) {
    std::map<std::string, std::string> got;
    for (const auto& [id, refusal] : d.failed) got[cluster.node(id).name] = refusal.format();
    CHECK(got == want["failed"].as<std::map<std::string, std::string>>());
  }
  if (want["events"]) {
    std::vector<std::string> got;
    for (const auto& e : d.events) got.push_back(e.reason + ": " + e.message);
    CHECK(got == want["events"].as<std::vector<std::string>>());
  }
  // Whatever the case asserts, the decision must be committable without
  // passing any card's slots, memory or cores.
  if (d.placed()) {
    Cluster after = cluster;
    Scheduler::commit(after, pod, d, policy);
    const auto& node = after.node(*d.node);
    auto usage = after.usage(*d.node);
    for (size_t i = 0; i < node.devices.size(); ++i) {
      CHECK(usage[i].slots <= node.devices[i].slots);
      CHECK(usage[i].memory_mib <= node.devices[i].memory_mib);
      // A MIG card's profiles may add up past its cores (seven 1g of 15 %):
      // HAMi charges them as they are.
      if (!node.devices[i].is_mig()) CHECK(usage[i].cores <= node.devices[i].cores);
    }
  }
}

}  // namespace gpuslice::testing
