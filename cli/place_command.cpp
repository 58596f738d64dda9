// `gpuslice place`: one placement decision from Kubernetes manifests.
#include "place_command.hpp"

#include <iostream>

#include "gpuslice/core/dialects/hami/device_config.hpp"
#include "gpuslice/core/place.hpp"
#include "io.hpp"

namespace gpuslice::cli {

namespace {
struct PlaceArgs {
  std::string nodes, pod, existing, quotas, node_policy, gpu_policy, policy, device_config;
  bool json = false;
};
}  // namespace

void register_place_command(CLI::App& app) {
  auto args = std::make_shared<PlaceArgs>();
  auto* cmd = app.add_subcommand(
      "place", "Place one pod on a fleet, as HAMi's (or Koordinator's, KAI's) scheduler would");
  cmd->add_option("--nodes", args->nodes,
                  "Node manifests (YAML, multi-document or a v1 List), with Koordinator Device CRs if any")
      ->required();
  cmd->add_option("--pod", args->pod, "the Pod to place, as a user writes it")->required();
  cmd->add_option(
      "--existing", args->existing,
      "already placed Pods (HAMi's, Koordinator's device-allocated, KAI's GPU groups and reservation pods)");
  cmd->add_option("--quotas", args->quotas,
                  "ResourceQuota objects (HAMi v2.10 enforces limits.nvidia.com/gpumem and gpucores); a dump "
                  "given as --nodes or --existing is read for them too");
  cmd->add_option("--policy", args->policy,
                  "a registered policy: hami (default), koordinator, koordinator-most, koordinator-fixed, "
                  "koordinator-most-fixed, kai-binpack, kai-spread, ... (docs/dialects.md)");
  cmd->add_option("--node-policy", args->node_policy,
                  "binpack | spread (default: the pod's annotation, then binpack)");
  cmd->add_option(
      "--gpu-policy", args->gpu_policy,
      "binpack | spread | topology-aware | mutex | numa or a comma chain (default: the pod's annotation, "
      "then spread)");
  cmd->add_option(
      "--device-config", args->device_config,
      "HAMi's device-config.yaml (the hami-scheduler-device ConfigMap's): resource names, request "
      "defaults, migProfileAllowlist; validated as HAMi does (default: the Helm chart's)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] {
    core::PlaceRequest req;
    req.nodes = {read_file(args->nodes), args->nodes};
    req.pod = {read_file(args->pod), args->pod};
    if (!args->existing.empty()) req.existing = core::TextInput{read_file(args->existing), args->existing};
    if (!args->quotas.empty()) req.quotas = core::TextInput{read_file(args->quotas), args->quotas};
    if (!args->node_policy.empty()) req.node_policy = args->node_policy;
    if (!args->gpu_policy.empty()) req.gpu_policy = args->gpu_policy;
    if (!args->policy.empty()) req.policy = args->policy;
    if (!args->device_config.empty())
      req.defaults =
          core::codec::parse_device_config(read_file(args->device_config), args->device_config).requests;
    auto outcome = core::place(req);
    for (const auto& w : outcome.warnings) std::cerr << "warning: " << w << "\n";
    if (args->json)
      std::cout << core::to_json(outcome).dump(2, ' ', false,
                                               nlohmann::ordered_json::error_handler_t::replace)
                << "\n";
    else
      std::cout << core::to_text(outcome);
    if (!outcome.decision.placed()) throw CLI::RuntimeError(1);
  });
}

}  // namespace gpuslice::cli
