// One placement from manifests, as `gpuslice place` and gpuslice.place()
// do it: nodes, already placed pods and the pod to place, all as text.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/core/scheduler.hpp"

namespace gpuslice::core {

struct TextInput {
  std::string text;
  std::string source;  // file name for error messages
};

struct PlaceRequest {
  TextInput nodes;
  TextInput pod;
  std::optional<TextInput> existing;
  // ResourceQuotas (HAMi v2.10's limits.nvidia.com/gpumem and gpucores),
  // also read from `nodes` and `existing` when those hold any (a dump).
  std::optional<TextInput> quotas;
  std::optional<std::string> node_policy;  // binpack | spread; overrides the pod's annotation
  std::optional<std::string> gpu_policy;   // binpack | spread | topology-aware | ...; likewise
  // A registered policy (policy_names()): "koordinator", "kai-binpack", ...
  // Unset: HAMi's, steered by node_policy and gpu_policy.
  std::optional<std::string> policy;
  codec::RequestDefaults defaults;
};

struct PlaceOutcome {
  Cluster cluster;
  PodRequest pod;  // as the deciding policy read it (translate.hpp)
  Decision decision;
  std::string policy = "hami";
  // The deciding scheduler's own record of the cards: HAMi's
  // hami.io/vgpu-devices-allocated, Koordinator's device-allocated JSON;
  // empty for KAI (which records groups) or when not placed.
  std::string allocation_annotation;
  // Everything it writes on the pod (annotation and label name -> value),
  // and for KAI a reservation pod per GPU group it opens.
  std::vector<std::pair<std::string, std::string>> annotations, labels;
  std::vector<std::string> reservation_pods;
  std::string enforcement;  // what isolates the pod on its card, in words
  KaiGroups kai_groups;     // KAI's groups already on the nodes (from --existing)
  // What was read but not counted, as HAMi would skip it (pods on nodes not
  // given, cards no longer registered); the CLI prints them to stderr.
  std::vector<std::string> warnings;
  // Why no node fits, in numbers: "needs 45000 MiB, the best card has 33140 free".
  std::string shortfall;
  // The namespaces' quotas and what the existing pods count against them.
  QuotaBook quotas;
};

// Throws InputError for bad input (file, line, field).
PlaceOutcome place(const PlaceRequest& request);

// The builder place() uses, for front ends that keep a cluster (the
// extender): the nodes of a node list (duplicates refused), and what one
// already placed pod holds as HAMi's pod cache counts it (nullopt: nothing;
// what is skipped is said in `warnings`).
Cluster cluster_of_nodes(const TextInput& nodes, std::vector<std::string>* warnings = nullptr);
std::optional<Holding> holding_of(const Cluster& cluster, const codec::PodDocument& pod,
                                  const std::string& source, std::vector<std::string>& warnings);

// How close the best card comes to the pod's first GPU container, in numbers:
// "needs 45000 MiB and 0% cores per card (1 card); the best card (GPU-x on
// node n) has 15360 MiB and 100% cores free". Empty when the pod asks no GPU.
std::string shortfall(const Cluster& cluster, const PodRequest& pod);

// Which of the pod's namespace's quotas it cannot fit and by how much, at
// the least it could count (each percentage on the smallest card; init
// containers at their peak, as HAMi's webhook sums them): "namespace
// team-a's ResourceQuota limits.nvidia.com/gpumem: the pod counts at least
// 6000 MiB, 2000 of 4000 are left (4000 over)". Empty when neither binds.
std::string quota_shortfall(const Cluster& cluster, const QuotaBook& quotas, const PodRequest& pod);
// The least the pod can count against its namespace's quota on this fleet,
// placed whole: a namespace without room for it refuses it on every node.
QuotaUse least_quota_use(const Cluster& cluster, const PodRequest& pod);
// The most it can count where no card has more than `largest_card_mib`:
// every container's cards at their largest, init and app containers summed
// (above HAMi's max of the two). A namespace with room for this cannot
// refuse the pod, whatever node and cards it gets.
QuotaUse most_quota_use(const PodRequest& pod, int64_t largest_card_mib);
int64_t largest_card_mib(const Cluster& cluster);

// {node, score, allocation, failed_nodes, events, warnings, shortfall}
nlohmann::ordered_json to_json(const PlaceOutcome& outcome);
std::string to_text(const PlaceOutcome& outcome);

}  // namespace gpuslice::core
