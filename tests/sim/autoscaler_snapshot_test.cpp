// --node-groups FILE for snapshot runs: the snapshot's nodes join Cluster
// Autoscaler's groups by their labels, count in min, max and cost, and are
// scaled down under the same rules as new nodes. Runs worked by hand.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {

std::string path(const std::string& rel) { return std::string(GPUSLICE_SOURCE_DIR) + "/" + rel; }

RunResult run(const Scenario& s) {
  RunOptions o = scenario_options(s);
  o.policy = "hami-binpack";
  return simulate(s, o);
}

const PodRecord& pod(const RunResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.name == name) return p;
  FAIL("no pod " << name);
  return r.pods.front();
}

// A node groups file written for one test (the snapshot is the bundled example's).
std::string groups_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuslice-autoscaler-snapshot-test";
  std::filesystem::create_directories(dir);
  const std::string p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}

SnapshotRunSpec example(const std::string& groups) {
  SnapshotRunSpec spec;
  spec.snapshot = path("examples/autoscale/cluster.yaml");
  spec.node_groups = groups;
  return spec;
}

std::string error_of(const SnapshotRunSpec& spec) {
  try {
    snapshot_scenario(spec);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("autoscaler snapshot: existing nodes join the group, grow it by the estimate and leave",
          "[sim][autoscaler]") {
  // t4-a (10000 of 15360 MiB, 2h), t4-b (empty) and t4-c (a bare 4000 MiB
  // pod) carry the pool's label: the group starts at 3 (min 1, max 4).
  // train-a (12000) fits only t4-b; train-b fits no card (5360 and 11360
  // free): CA adds 1 node copied from t4-a, Ready at 180 s. t4-c, unneeded
  // from 0 (26 %), is kept at 600 s for its bare pod. train-a leaves at
  // 3600: t4-b is removed at 4200; train-b leaves at 3780: t4-pool-0 at 4380;
  // infer leaves at 7200: t4-a at 7800, and the group is at 1 node, t4-c.
  // Node-seconds 4 x 4200 + 3 x 180 + 2 x 3420 = 24180: 6.7167 h, $2.35.
  const Scenario s = snapshot_scenario(example(path("examples/autoscale/node-groups.yaml")));
  REQUIRE(s.node_groups.size() == 1);
  CHECK(s.node_groups[0].members == std::vector<size_t>{0, 1, 2});
  REQUIRE(s.node_groups[0].prototype);
  CHECK(s.node_groups[0].node.card_memory_mib == 15360);
  const RunResult r = run(s);
  CHECK(pod(r, "ml/train-a-0").node == "t4-b");
  CHECK(pod(r, "ml/train-a-0").start == 0);
  CHECK(pod(r, "ml/train-b-0").node == "t4-pool-0");
  CHECK(pod(r, "ml/train-b-0").start == 180);
  const auto& g = r.summary["node_groups"][0];
  CHECK(g["scale_ups"] == 1);
  CHECK(g["nodes_added"] == 1);
  CHECK(g["scale_downs"] == 3);
  CHECK(g["peak_nodes"] == 4);
  CHECK(g["nodes_at_end"] == 1);
  CHECK(g["members"] == 3);
  CHECK(g["node_hours"].get<double>() == Approx(24180.0 / 3600));
  CHECK(g["cost"].get<double>() == Approx(2.35));
  CHECK(r.summary["nodes"] == 1);
  CHECK(g["sizes"]["time"] == std::vector<double>{0, 4200, 4380, 7800});
  CHECK(g["sizes"]["nodes"] == std::vector<int>{4, 3, 2, 1});
}

TEST_CASE("autoscaler snapshot: a template names the new nodes' shape, min counts the members",
          "[sim][autoscaler]") {
  // The same pool with a 24000 MiB template and min 4: one template node
  // is Ready from the start (3 members + 1 = min), so both 12000 MiB pods
  // start at once (t4-b and l4-0 hold 39360 MiB free) and nothing scales
  // up; the group stays at its min.
  const Scenario s = snapshot_scenario(example(groups_file("template.yaml", R"(
node_groups:
- name: t4-pool
  node_labels: {cloud.google.com/gke-nodepool: t4-pool}
  template: {name: l4, model: NVIDIA-L4, cards: 1, card_memory_mib: 24000}
  min: 4
  max: 5
)")));
  REQUIRE(s.fleet.size() == 3);
  const RunResult r = run(s);
  CHECK(pod(r, "ml/train-a-0").start == 0);
  CHECK(pod(r, "ml/train-b-0").start == 0);
  CHECK((pod(r, "ml/train-b-0").node == "l4-0" || pod(r, "ml/train-a-0").node == "l4-0"));
  const auto& g = r.summary["node_groups"][0];
  CHECK(g["scale_ups"] == 0);
  CHECK(g["scale_downs"] == 0);
  CHECK(g["peak_nodes"] == 4);
  CHECK(g["nodes_at_end"] == 4);
}

TEST_CASE("autoscaler snapshot: bad node groups files name the file, line and field", "[sim][autoscaler]") {
  const std::string two = groups_file("two.yaml", R"(node_groups:
- name: pool
  node_labels: {cloud.google.com/gke-nodepool: t4-pool}
  max: 4
- name: all
  node_labels: {cloud.google.com/gke-nodepool: t4-pool, kubernetes.io/hostname: t4-b}
  max: 4
)");
  CHECK(error_of(example(two)) ==
        two +
            ":6: node_groups[1].node_labels: node 't4-b' carries the labels of group 'pool' and of group "
            "'all': a node belongs to one node group");
  const std::string unknown = groups_file("unknown.yaml", R"(node_groups:
- name: pool
  node_labels: {cloud.google.com/gke-nodepool: t4-pool}
  maximum: 4
)");
  CHECK(error_of(example(unknown)) == unknown + ":4: node_groups[0].maximum: unknown field");
  const std::string over = groups_file("over.yaml", R"(node_groups:
- name: pool
  node_labels: {cloud.google.com/gke-nodepool: t4-pool}
  max: 2
)");
  CHECK(error_of(example(over)).find(over + ":3: node_groups[0].max: group 'pool' has 3 nodes") == 0);
  const std::string none = groups_file("none.yaml", R"(node_groups:
- name: a100-pool
  node_labels: {cloud.google.com/gke-nodepool: a100-pool}
  max: 2
)");
  CHECK(error_of(example(none)) ==
        none +
            ":3: node_groups[0].template: no node of the snapshot carries "
            "cloud.google.com/gke-nodepool=a100-pool, so group 'a100-pool' needs a "
            "template");
  const std::string clash = groups_file("clash.yaml", R"(node_groups:
- name: t4
  node_labels: {cloud.google.com/gke-nodepool: t4-pool}
  max: 4
)");
  CHECK(error_of(example(clash)).find(clash + ":3: node_groups[0].name: new nodes of group 't4'") == 0);
  const std::string top = groups_file("top.yaml", "fleet: []\nnode_groups: []\n");
  CHECK(error_of(example(top)) == top + ":1: fleet: unknown field");

  // Labels no node carries, with a template: a warning, and the group starts from its template.
  const std::string warn = groups_file("warn.yaml", R"(node_groups:
- name: a100-pool
  node_labels: {cloud.google.com/gke-nodepool: a100-pool}
  template: {name: a100, model: NVIDIA-A100-SXM4-80GB, cards: 1, card_memory_mib: 81920}
  max: 2
)");
  const Scenario s = snapshot_scenario(example(warn));
  CHECK(s.node_groups.at(0).members.empty());
  bool warned = false;
  for (const auto& w : s.snapshot->warnings)
    warned = warned || w == warn +
                                ":3: node_groups[0].node_labels: no node of the snapshot carries "
                                "cloud.google.com/gke-nodepool=a100-pool; group 'a100-pool' starts with "
                                "only its template's nodes";
  CHECK(warned);
}

namespace {

// The example's dump with debug-shell (t4-c's 4000 MiB pod) owned by a
// ReplicaSet and labelled app: debug, plus `budget` (a PodDisruptionBudget
// item, or nothing) appended.
std::string dump_with_budget(const std::string& name, const std::string& budget) {
  std::ifstream in(path("examples/autoscale/cluster.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string anchor = "    name: debug-shell\n    namespace: web\n";
  const auto at = text.find(anchor);
  REQUIRE(at != std::string::npos);
  text.insert(
      at + anchor.size(),
      "    labels: {app: debug}\n"
      "    ownerReferences:\n"
      "    - {apiVersion: apps/v1, controller: true, kind: ReplicaSet, name: debug-rs, uid: debug-rs-uid}\n");
  text += budget;
  return groups_file(name, text);
}

// The example's run with the dump of dump_with_budget.
RunResult run_with(const std::string& name, const std::string& budget) {
  SnapshotRunSpec spec;
  spec.snapshot = dump_with_budget(name, budget);
  spec.node_groups = path("examples/autoscale/node-groups.yaml");
  return run(snapshot_scenario(spec));
}

// A policy/v1 budget over app: debug in web; its minAvailable or maxUnavailable line follows.
const std::string pdb_head = R"(- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: debug-pdb, namespace: web}
  spec:
    selector: {matchLabels: {app: debug}}
)";

double removed_at(const RunResult& r, size_t size_before, size_t size_after) {
  const auto& sizes = r.summary["node_groups"][0]["sizes"];
  for (size_t i = 1; i < sizes["nodes"].size(); ++i)
    if (sizes["nodes"][i - 1] == size_before && sizes["nodes"][i] == size_after) return sizes["time"][i];
  return -1;
}

}  // namespace

TEST_CASE("autoscaler snapshot: a dump's PodDisruptionBudget keeps a node CA would drain",
          "[sim][autoscaler][pdb]") {
  // t4-c holds debug-shell (4000 of 15360 MiB: 26 %, under the 0.5
  // threshold), now owned by a ReplicaSet: with no budget CA drains it at
  // 600 s (the pod fits t4-a's 5360 MiB free) and the group goes 4 -> 3
  // there. A budget with minAvailable 1 over app: debug allows 0
  // disruptions (1 healthy - 1): CA's CanRemovePods refuses, t4-c stays
  // and the pod is never evicted. maxUnavailable 1 allows 1: drained as
  // without a budget.
  const RunResult none = run_with("no-budget.yaml", "");
  CHECK(removed_at(none, 4, 3) == 600);
  CHECK(pod(none, "web/debug-shell").node != "t4-c");

  const RunResult kept = run_with("min-available.yaml", pdb_head + "    minAvailable: 1\n");
  CHECK(removed_at(kept, 4, 3) != 600);
  CHECK(pod(kept, "web/debug-shell").node == "t4-c");
  CHECK(pod(kept, "web/debug-shell").start == 0);

  const RunResult allowed = run_with("max-unavailable.yaml", pdb_head + "    maxUnavailable: 1\n");
  CHECK(removed_at(allowed, 4, 3) == 600);
}

TEST_CASE("autoscaler snapshot: a budget allowing one disruption over two pods of a node drains it",
          "[sim][autoscaler][pdb]") {
  // CA's CanRemovePods (basic_pdb_tracker.go) refuses a node only when a
  // budget matching one of its pods has disruptionsAllowed < 1; a budget
  // allowing fewer disruptions than it matches pods there only makes the
  // drain sequential (inParallel = false). A second app: debug pod of
  // 1000 MiB joins debug-shell on t4-c (5000 of 15360 MiB: 33 %, still
  // under the 0.5 threshold; both fit t4-a's 5360 MiB free). maxUnavailable
  // 1 over the two allows 1: t4-c is drained at 600 s as without a budget.
  // minAvailable 2 allows 0 (2 healthy - 2): t4-c stays.
  const std::string second_pod = R"(- apiVersion: v1
  kind: Pod
  metadata:
    name: debug-shell-2
    namespace: web
    creationTimestamp: '2026-11-28T08:00:00Z'
    labels: {app: debug}
    ownerReferences:
    - {apiVersion: apps/v1, controller: true, kind: ReplicaSet, name: debug-rs, uid: debug-rs-uid}
    annotations:
      hami.io/bind-phase: success
      hami.io/vgpu-devices-allocated: GPU-t4-c-0,NVIDIA,1000,0:;
      hami.io/vgpu-devices-to-allocate: ;
      hami.io/vgpu-node: t4-c
  spec:
    nodeName: t4-c
    containers:
    - name: main
      resources:
        limits:
          nvidia.com/gpu: '1'
          nvidia.com/gpumem: '1000'
  status:
    phase: Running
)";
  const RunResult sequential =
      run_with("two-max-unavailable.yaml", second_pod + pdb_head + "    maxUnavailable: 1\n");
  CHECK(removed_at(sequential, 4, 3) == 600);
  CHECK(pod(sequential, "web/debug-shell").node != "t4-c");
  CHECK(pod(sequential, "web/debug-shell-2").node != "t4-c");

  const RunResult kept = run_with("two-min-available.yaml", second_pod + pdb_head + "    minAvailable: 2\n");
  CHECK(removed_at(kept, 4, 3) != 600);
  CHECK(pod(kept, "web/debug-shell").node == "t4-c");
  CHECK(pod(kept, "web/debug-shell-2").node == "t4-c");
}
