// The same pods through `gpuslice place` (core::place) and through the
// extender's filter give the same node, cards, annotation and events, over
// HAMi's conformance cases (tests/core/data) turned into manifests; and the
// filter's ranked fast path (large filters) the same node and cards as its
// full report.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "case_runner.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/place.hpp"
#include "serve_fixture.hpp"

using namespace gpuslice::serve;
namespace core = gpuslice::core;
namespace cases = gpuslice::testing;

namespace {

// A node as HAMi's device plugin registers it, and one placed pod per slot
// already in use (HAMi's scheduler counts usage from its pods).
void case_objects(const YAML::Node& c, std::vector<nlohmann::json>& nodes,
                  std::vector<nlohmann::json>& pods) {
  int n = 0;
  for (const auto& spec : c["nodes"]) {
    const core::Node node = cases::build_node(spec);
    nodes.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", node.name},
                       {"annotations",
                        {{std::string(core::codec::kRegisterAnnotation),
                          core::codec::encode_registration_json(node.devices)}}}}}});
    size_t position = 0;
    for (const auto& card : spec["cards"]) {
      if (card["used"]) {
        auto u = card["used"].as<std::vector<int64_t>>();
        for (int64_t s = 0; s < u[0]; ++s) {
          const std::string grant = fmt::format("{},NVIDIA,{},{}:;", node.devices[position].uuid,
                                                s == 0 ? u[1] : 0, s == 0 ? u[2] : 0);
          const std::string name = fmt::format("used-{}", n++);
          pods.push_back({{"apiVersion", "v1"},
                          {"kind", "Pod"},
                          {"metadata",
                           {{"name", name},
                            {"namespace", "default"},
                            {"uid", "uid-" + name},
                            {"annotations",
                             {{"hami.io/vgpu-node", node.name}, {"hami.io/vgpu-devices-allocated", grant}}}}},
                          {"spec", {{"nodeName", node.name}, {"containers", {{{"name", "app"}}}}}},
                          {"status", {{"phase", "Running"}}}});
        }
      }
      ++position;
    }
  }
}

std::string list_text(const std::vector<nlohmann::json>& items) {
  return nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump();
}

}  // namespace

TEST_CASE("place and /filter decide alike over the conformance cases", "[serve][conformance]") {
  int compared = 0;
  for (const char* file : {"filter_policies.yaml", "events.yaml", "seed_labs.yaml", "gpu_ordering.yaml",
                           "fit_reasons.yaml", "requests.yaml"}) {
    for (const auto& c : cases::load_cases(file).cases) {
      // Operator flags, host capacity, cordons and pair scores are not in
      // this manifest builder: those cases stay with the core's runner.
      if (c["node_policy"] || c["gpu_policy"] || c["defaults"]) continue;
      bool plain = true;
      for (const auto& spec : c["nodes"])
        plain = plain && !spec["capacity"] && !spec["host_used"] && !spec["cordoned"] && !spec["pair_scores"];
      if (!plain) continue;
      const std::string name = c["name"].as<std::string>();
      INFO(file << ": " << name);
      std::vector<nlohmann::json> nodes, pods;
      case_objects(c, nodes, pods);
      const std::string manifest = cases::pod_manifest(c["pod"]);

      core::PlaceRequest req;
      req.nodes = {list_text(nodes), "nodes"};
      req.existing = core::TextInput{list_text(pods), "pods"};
      req.pod = {manifest, "pod"};
      core::PlaceOutcome want;
      try {
        want = core::place(req);
      } catch (const core::InputError&) {
        continue;  // a case about refused input: not a placement
      }
      if (!want.pod.wants_devices()) continue;  // the extender passes such pods through

      // 0: every filter takes the fast path, whatever its size.
      for (const size_t full_report_nodes : {StateOptions{}.full_report_nodes, size_t{0}}) {
        INFO("full_report_nodes " << full_report_nodes);
        MemoryWriter writer;
        StateOptions options;
        options.full_report_nodes = full_report_nodes;
        DecisionState state(options, writer);
        state.replace_all(nodes, pods);
        std::vector<nlohmann::json> request_pods, ignored;
        read_cluster_objects(manifest, "pod", ignored, request_pods);
        REQUIRE(request_pods.size() == 1);
        ExtenderArgs args;
        args.pod = request_pods.front();
        for (const auto& n : nodes) args.node_names.push_back(n["metadata"]["name"]);
        const auto got = state.filter(args);

        REQUIRE(got.nodes.has_value() == want.decision.placed());
        std::vector<std::string> want_events, got_events;
        for (const auto& e : want.decision.events) want_events.push_back(e.reason + ": " + e.message);
        for (const auto& e : writer.events()) got_events.push_back(e.reason + ": " + e.message);
        if (full_report_nodes > 0 || !want.decision.placed()) {
          CHECK(got_events == want_events);
        } else {
          // The fast path names the node, not every fitting node's score.
          REQUIRE(got_events.size() == 1);
          CHECK(
              got_events.front() ==
              fmt::format("FilteringSucceed: find fit node({}) among {} nodes, best first by the node policy "
                          "(every fitting node's score is listed only for filters naming at most 0 nodes)",
                          got.nodes->front(), nodes.size()));
        }
        if (want.decision.placed()) {
          CHECK(got.nodes->front() == want.cluster.node(*want.decision.node).name);
          const auto ann = writer.pod_annotations("default", want.pod.name);
          CHECK(ann["hami.io/vgpu-devices-allocated"] == want.allocation_annotation);
          CHECK(ann["hami.io/vgpu-node"] == got.nodes->front());
        } else {
          std::map<std::string, std::string> want_failed;
          for (const auto& [id, refusal] : want.decision.failed)
            want_failed[want.cluster.node(id).name] = refusal.format();
          CHECK(got.failed == want_failed);
        }
        ++compared;
      }
    }
  }
  CHECK(compared >= 80);
}
