// What defrag reads and refuses: goals naming what the snapshot lacks,
// policies that cannot replay, and the pods' labels, controllers and
// PodDisruptionBudgets as the dump writes them.
#include "gpuslice/defrag/input.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/defrag/problem.hpp"

using namespace gpuslice;
using namespace gpuslice::defrag;

namespace {

std::string data(const std::string& name) {
  return std::string(GPUSLICE_SOURCE_DIR) + "/tests/defrag/data/" + name;
}

Goal pods(std::vector<std::string> keys) {
  Goal g;
  g.kind = Goal::Kind::Pods;
  g.pods = std::move(keys);
  return g;
}

std::string refusal(const Input& in, const Goal& goal, ProblemOptions options = {}) {
  try {
    build_problem(in.snapshot, in.facts, goal, options);
  } catch (const core::InputError& e) {
    return e.field() + ": " + e.detail();
  }
  return "accepted";
}

// One node, one running pod and what the test appends (pods, budgets).
std::string cluster(const std::string& more) {
  return R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a100
    annotations:
      hami.io/node-nvidia-register: '[{"id":"GPU-a","index":0,"count":10,"devmem":81920,"devcore":100,"type":"NVIDIA-A100","health":true}]'
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-0
    namespace: ml
    labels: {app: web, tier: serving}
    ownerReferences:
    - {apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}
    - {apiVersion: v1, kind: ConfigMap, name: other, uid: u2}
    annotations: {hami.io/vgpu-node: a100, hami.io/vgpu-devices-allocated: "GPU-a,NVIDIA,20000,0:;"}
  spec:
    nodeName: a100
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1", nvidia.com/gpumem: "20000"}}}]
  status: {phase: Running, conditions: [{type: Ready, status: "False"}]}
)" + more;
}

}  // namespace

TEST_CASE("bad --for: an unknown pod, a running pod, a finished one: refused with the reason",
          "[defrag][input]") {
  const Input in = load_input(std::string(GPUSLICE_SOURCE_DIR) + "/examples/snapshot/cluster.yaml");
  CHECK(refusal(in, pods({"ml/nope"})) == "--for: the snapshot has no pod 'ml/nope'");
  CHECK(refusal(in, pods({"ml/train-llm-7b-0"})) ==
        "--for: 'ml/train-llm-7b-0' is already running on node 'gpu-a100-1': only pending pods can be --for "
        "targets");
  CHECK(refusal(in, pods({"ml/eval-nightly-28871"})) ==
        "--for: 'ml/eval-nightly-28871' has finished (Succeeded): nothing to place");
  CHECK(refusal(in, pods({"kube-system/coredns-6f6b679f8f-x2k4m"})) != "accepted");
  CHECK(refusal(in, pods({"finetune"})) == "--for: 'finetune': write NAMESPACE/POD");
  CHECK(refusal(in, pods({"ml/finetune-7b-0", "ml/finetune-7b-0"})) ==
        "--for: 'ml/finetune-7b-0' is named twice");
  CHECK(refusal(in, pods({"ml/finetune-7b-0"})) == "accepted");
}

TEST_CASE("bad --free-cards: larger than the fleet, or malformed", "[defrag][input]") {
  const Input in = load_input(std::string(GPUSLICE_SOURCE_DIR) + "/examples/snapshot/cluster.yaml");
  CHECK(refusal(in, free_cards_goal("11")) ==
        "--free-cards: 11 free cards asked, but the fleet has 10 usable cards");
  CHECK(refusal(in, free_cards_goal("3:A100")) ==
        "--free-cards: 3 free cards asked, but the fleet has 2 usable cards of model 'A100'");
  CHECK(refusal(in, free_cards_goal("1:H100")) ==
        "--free-cards: 1 free cards asked, but the fleet has 0 usable cards of model 'H100'");
  CHECK_THROWS_AS(free_cards_goal("0"), core::InputError);
  CHECK_THROWS_AS(free_cards_goal("two"), core::InputError);
  CHECK_THROWS_AS(free_cards_goal("2:"), core::InputError);
}

TEST_CASE("policies: unknown refused, random refused (a plan would not replay)", "[defrag][input]") {
  const Input in = load_input(data("one-move.yaml"));
  ProblemOptions o;
  o.policy = "sideways";
  CHECK_THAT(refusal(in, Goal{}, o), Catch::StartsWith("--policy: unknown policy 'sideways'"));
  o.policy = "random";
  CHECK_THAT(refusal(in, Goal{}, o), Catch::Contains("by chance"));
  o.policy = "fgd";
  o.gpu_policy = "diagonal";
  CHECK_THAT(refusal(in, Goal{}, o), Catch::StartsWith("--gpu-policy:"));
}

TEST_CASE("labels, the controlling owner reference and readiness are read from the dump", "[defrag][input]") {
  const Input in = parse_input(cluster(""), "inline.yaml");
  const PodFacts& f = in.facts.pods.at("ml/web-0");
  CHECK(f.labels == Labels{{"app", "web"}, {"tier", "serving"}});
  REQUIRE(f.controller);
  CHECK(f.controller->kind == "ReplicaSet");
  CHECK(f.controller->name == "web-abc");
  CHECK(f.ready == std::optional<bool>(false));
  CHECK_FALSE(f.healthy());
}

TEST_CASE("movable: --protect, --movable and budgets decide", "[defrag][input]") {
  const Input in = parse_input(cluster(""), "inline.yaml");
  auto pinned = [&](ProblemOptions o) {
    return build_problem(in.snapshot, in.facts, Goal{}, o).problem.pods.at(0).pinned;
  };
  CHECK(pinned({}) == Pinned::No);
  ProblemOptions o;
  o.protect = {"ml"};
  CHECK(pinned(o) == Pinned::Protected);
  o = {};
  o.movable = parse_label_selector("tier notin (serving)");
  CHECK(pinned(o) == Pinned::NotSelected);
  o.movable = parse_label_selector("app=web");
  CHECK(pinned(o) == Pinned::No);
}

TEST_CASE("PodDisruptionBudgets: read, counted, and bad ones refused with file, line and field",
          "[defrag][input]") {
  const std::string budget = R"(- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: web, namespace: ml}
  spec:
    maxUnavailable: 50%
    selector:
      matchExpressions: [{key: app, operator: In, values: [web]}]
)";
  const Input in = parse_input(cluster(budget), "inline.yaml");
  REQUIRE(in.facts.budgets.size() == 1);
  const Built b = build_problem(in.snapshot, in.facts, Goal{}, {});
  // One pod, not Ready: no healthy pod, so no eviction allowed.
  CHECK(b.problem.budgets.at(0).allowed == 0);
  CHECK(b.problem.pods.at(0).pinned == Pinned::NoDisruptions);

  auto error = [](const std::string& text) {
    try {
      parse_input(text, "bad.yaml");
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto with_spec = [&](const std::string& spec) {
    return cluster(
        "- apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata: {name: web, namespace: ml}\n  "
        "spec:\n" +
        spec);
  };
  CHECK_THAT(error(with_spec("    minAvailable: many\n")),
             Catch::Contains("spec.minAvailable: 'many' is neither"));
  CHECK_THAT(error(with_spec("    minAvailable: 150%\n")), Catch::Contains("more than 100%"));
  CHECK_THAT(error(with_spec("    minAvailable: 1\n    maxUnavailable: 1\n")),
             Catch::Contains("cannot both be set"));
  CHECK_THAT(error(with_spec(
                 "    minAvailable: 1\n    selector: {matchExpressions: [{key: app, operator: Near}]}\n")),
             Catch::Contains("bad.yaml:29: spec.selector.matchExpressions[0]: unknown operator 'Near'"));
  CHECK_THAT(error(with_spec("    minAvailable: 1\n    selector: {matchLabels: {'-x': y}}\n")),
             Catch::Contains("spec.selector.matchLabels.-x"));
  // A policy/v1beta1 budget is left out with a warning, not guessed at.
  const Input old = parse_input(cluster("- apiVersion: policy/v1beta1\n  kind: PodDisruptionBudget\n  "
                                        "metadata: {name: web, namespace: ml}\n  spec: "
                                        "{minAvailable: 1}\n"),
                                "old.yaml");
  CHECK(old.facts.budgets.empty());
  REQUIRE(old.warnings.size() == 1);
  CHECK_THAT(old.warnings[0], Catch::Contains("policy/v1beta1, not policy/v1: left out"));
}

TEST_CASE("a DaemonSet's pod is not movable: it comes back on its own node", "[defrag][input]") {
  std::string text = cluster("");
  const std::string owner = "kind: ReplicaSet, name: web-abc";
  text.replace(text.find(owner), owner.size(), "kind: DaemonSet, name: dcgm");
  const Input in = parse_input(text, "ds.yaml");
  CHECK(build_problem(in.snapshot, in.facts, Goal{}, {}).problem.pods.at(0).pinned == Pinned::NodeBound);
}

TEST_CASE("two controllers on one pod are refused", "[defrag][input]") {
  std::string text = cluster("");
  const std::string second = "    - {apiVersion: v1, kind: ConfigMap, name: other, uid: u2}";
  text.replace(text.find(second), second.size(),
               "    - {apiVersion: apps/v1, kind: StatefulSet, name: s, uid: u3, controller: true}");
  CHECK_THROWS_WITH(parse_input(text, "two.yaml"), Catch::Contains("at most one controller"));
}
