// Cluster snapshots (kubectl get nodes,pods -A -o yaml|json of a HAMi
// cluster) as the simulator's start: reader rules and the runs they give.
#include "gpuslice/sim/snapshot.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
std::string path(const std::string& rel) { return std::string(GPUSLICE_SOURCE_DIR) + "/" + rel; }

std::vector<std::string> queue_names(const ClusterSnapshot& s) {
  std::vector<std::string> out;
  for (const auto& q : s.queue) out.push_back(q.request.ns + "/" + q.request.name);
  return out;
}

RunResult run(const Scenario& s, const std::string& policy = "hami-binpack") {
  RunOptions o = scenario_options(s);
  o.policy = policy;
  return simulate(s, o);
}

// One T4 node (one card, 15360 MiB, 10 slots) and pods written by hand in
// kubectl's shape; `pods` is appended to the list's items.
std::string cluster(const std::string& pods) {
  return R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: t4
    annotations:
      hami.io/node-nvidia-register: '[{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true}]'
)" + pods;
}

std::string pending_pod(const std::string& ns, const std::string& name, const std::string& created, int mib) {
  return "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name + "\n    namespace: " + ns +
         "\n    creationTimestamp: \"" + created +
         "\"\n  spec:\n    containers:\n    - name: main\n      resources:\n        limits:\n"
         "          nvidia.com/gpu: 1\n          nvidia.com/gpumem: " +
         std::to_string(mib) + "\n  status:\n    phase: Pending\n";
}
}  // namespace

TEST_CASE("snapshot: the bundled example reads alike from YAML and JSON", "[sim][snapshot]") {
  const auto yaml = load_snapshot(path("examples/snapshot/cluster.yaml"));
  const auto json = load_snapshot(path("examples/snapshot/cluster.json"));
  for (const auto* s : {&yaml, &json}) {
    CHECK(s->nodes.size() == 4);  // the control plane too (no GPU)
    CHECK(s->running_gpu_pods == 9);
    CHECK(s->starting.size() == 10);  // + coredns, whose CPU and memory count on control-1
    CHECK(s->skipped == std::map<std::string, size_t>{{kSkipSucceeded, 1}, {kSkipNoGpu, 1}});
    CHECK(s->warnings.empty());
    // creationTimestamp order; whisper-6 and -7 were created in the same
    // second: namespace/name breaks the tie.
    CHECK(queue_names(*s) == std::vector<std::string>{"ml/finetune-7b-0", "lab/notebook-carol",
                                                      "serving/whisper-6", "serving/whisper-7",
                                                      "ml/train-llm-70b-0", "research/sweep-4card-0",
                                                      "lab/notebook-dave"});
  }
  // gpuslice.io/expected-duration: train-llm-13b-0 says 2h; the others run on.
  CHECK(yaml.starting[1].request.name == "train-llm-13b-0");
  CHECK(yaml.starting[1].duration == 7200);
  CHECK(yaml.starting[2].duration == kForever);
  CHECK(load_snapshot(path("examples/snapshot/cluster.yaml"), 600).starting[2].duration == 600);
}

TEST_CASE("snapshot: the queue is creation order, whatever the file's order", "[sim][snapshot]") {
  const auto s = parse_snapshot(cluster(pending_pod("b", "late", "2026-01-01T10:00:00Z", 1000) +
                                        pending_pod("b", "tie", "2026-01-01T09:00:00+00:00", 1000) +
                                        pending_pod("a", "tie", "2026-01-01T11:00:00+02:00", 1000) +
                                        pending_pod("z", "early", "2025-12-31T23:59:59.5Z", 1000)),
                                "hand.yaml");
  // a/tie (09:00 UTC by its offset) and b/tie are equal: a before b.
  CHECK(queue_names(s) == std::vector<std::string>{"z/early", "a/tie", "b/tie", "b/late"});
}

TEST_CASE("snapshot: skipped pods are counted, stale cards and unknown nodes warned", "[sim][snapshot]") {
  const std::string pods = R"(- apiVersion: v1
  kind: Pod
  metadata:
    name: stale
    namespace: ml
    annotations:
      hami.io/vgpu-node: t4
      hami.io/vgpu-devices-allocated: GPU-a,NVIDIA,4000,0:GPU-gone,NVIDIA,4000,0:;
  spec:
    nodeName: t4
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 2, nvidia.com/gpumem: 4000}}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: elsewhere
    namespace: ml
    annotations:
      hami.io/vgpu-node: gone-node
      hami.io/vgpu-devices-allocated: GPU-x,NVIDIA,4000,0:;
  spec:
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: web, namespace: default}
  spec:
    containers: [{name: nginx}]
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata: {name: crashed, namespace: ml}
  spec:
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 1}}
  status: {phase: Failed}
)";
  const auto s = parse_snapshot(cluster(pods), "hand.yaml");
  CHECK(s.running_gpu_pods == 1);
  REQUIRE(s.starting.size() == 1);
  CHECK(s.starting[0].allocation.containers.at(0).size() == 1);  // the grant on GPU-gone is dropped
  CHECK(s.queue.empty());
  CHECK(s.skipped == std::map<std::string, size_t>{{kSkipUnknownNode, 1}, {kSkipNoGpu, 1}, {kSkipFailed, 1}});
  REQUIRE(s.warnings.size() == 2);
  CHECK(s.warnings[0].find("GPU-gone") != std::string::npos);
  CHECK(s.warnings[1].find("gone-node") != std::string::npos);
}

TEST_CASE("snapshot: bad input names the file, line and field", "[sim][snapshot]") {
  try {
    parse_snapshot(cluster(pending_pod("a", "p", "yesterday", 1000)), "bad.yaml");
    FAIL("no error");
  } catch (const core::InputError& e) {
    CHECK(e.file() == "bad.yaml");
    CHECK(e.line() == 15);
    CHECK(e.field() == "metadata.creationTimestamp");
  }
  CHECK_THROWS_AS(parse_snapshot("apiVersion: v1\nkind: List\nitems: []\n", "empty.yaml"), core::InputError);
  CHECK(parse_duration("2h30m") == 9000);
  CHECK(parse_duration("3d") == 259200);
  CHECK(parse_duration("90") == 90);
  CHECK_FALSE(parse_duration("soon"));
  CHECK_FALSE(parse_duration("1h30"));
  CHECK_FALSE(parse_duration("0s"));
}

TEST_CASE("snapshot run: the queue places, waits for departures or is refused", "[sim][snapshot]") {
  SnapshotRunSpec spec;
  spec.snapshot = path("examples/snapshot/cluster.yaml");
  spec.assume_duration = 3 * 3600.0;
  const Scenario scenario = snapshot_scenario(spec);
  const RunResult r = run(scenario);
  const auto& s = r.summary;
  CHECK(s["run_kind"] == "snapshot");
  CHECK(s["pods"] == 7);  // the queue; the running pods have no row
  CHECK(r.pods.size() == 17);
  std::map<std::string, const PodRecord*> by_name;
  for (const auto& p : r.pods)
    if (!p.starting) by_name[p.name] = &p;
  REQUIRE(by_name.size() == 7);
  // 70000 MiB fits only a whole A100 card: it waits until train-llm-13b-0
  // leaves (its own annotation: 2h) and then train-llm-7b-0 (3h assumed)...
  const PodRecord& finetune = *by_name.at("ml/finetune-7b-0");
  CHECK(finetune.node == "gpu-a100-1");
  CHECK(finetune.start > 0);
  CHECK(finetune.shortfall.find("needs 70000 MiB") != std::string::npos);
  // ... while 2 x 90000 MiB fits no card of the fleet: refused at once.
  const PodRecord& big = *by_name.at("ml/train-llm-70b-0");
  CHECK(big.status == "refused");
  CHECK(big.reason == "CardInsufficientMemory");
  CHECK(big.shortfall.find("90000 MiB") != std::string::npos);
  CHECK(s["snapshot"]["queue_placed"] == 5);
  CHECK(s["snapshot"]["queue_refused"] == 2);
  CHECK(s["snapshot"]["skipped"][kSkipSucceeded] == 1);
}

TEST_CASE("snapshot run: --add-nodes copies a node, --cordon closes one", "[sim][snapshot]") {
  SnapshotRunSpec spec;
  spec.snapshot = path("examples/snapshot/cluster.yaml");
  spec.cordon = {"gpu-t4-2"};
  Scenario s = snapshot_scenario(spec);
  CHECK(s.fleet.size() == 4);
  const RunResult r = run(s);
  for (const auto& p : r.pods)
    if (!p.starting) CHECK(p.node != "gpu-t4-2");
  spec.cordon = {"no-such-node"};
  CHECK_THROWS_AS(snapshot_scenario(spec), core::InputError);

  // One more 2 x A100 node: the 70000 MiB fine-tune no longer waits.
  spec.cordon.clear();
  spec.assume_duration = 3 * 3600.0;
  spec.add_nodes = {path("examples/snapshot/a100-node.yaml") + ":1"};
  const Scenario added = snapshot_scenario(spec);
  REQUIRE(added.fleet.size() == 5);
  CHECK(added.fleet.node(4).name == "gpu-a100-new-0");
  CHECK(added.fleet.node(4).devices.at(1).uuid == "GPU-gpu-a100-new-0-1");
  bool placed_at_once = false;
  for (const auto& p : run(added).pods)
    if (p.name == "ml/finetune-7b-0") placed_at_once = p.start == 0;
  CHECK(placed_at_once);
  spec.add_nodes = {path("examples/snapshot/a100-node.yaml") + ":x"};
  CHECK_THROWS_AS(snapshot_scenario(spec), core::InputError);
}

namespace {
Scenario snapshot_of(const std::string& rel) {
  SnapshotRunSpec spec;
  spec.snapshot = path(rel);
  return snapshot_scenario(spec);
}

// The run's record of a pod of a snapshot's queue, by namespace/name.
const PodRecord& record(const RunResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.name == name) return p;
  FAIL("no record of " << name);
  return r.pods.front();
}
}  // namespace

// Hand-checked (docs/dialects.md, "The example snapshots"): DeviceShare's
// LeastAllocated device choice, fillGPUTotalMem's ratio, the isolation
// provider, a whole GPU with none free.
TEST_CASE("snapshot: a Koordinator cluster replays under koordinator", "[sim][snapshot][koordinator]") {
  const Scenario s = snapshot_of("examples/snapshot/koordinator-cluster.yaml");
  const ClusterSnapshot& snap = *s.snapshot;
  CHECK(snap.nodes.size() == 2);
  CHECK(snap.running_gpu_pods == 2);
  CHECK(snap.skipped == std::map<std::string, size_t>{{kSkipSucceeded, 1}});
  CHECK(snap.queue.size() == 5);
  const RunResult r = run(s, "koordinator");
  const auto& q1 = record(r, "default/q1-seed-example");
  CHECK(q1.node == "koord-a");
  CHECK(q1.allocation.find("GPU-a1") != std::string::npos);  // the free card: LeastAllocated
  const auto& q2 = record(r, "default/q2-memory-8gi");
  CHECK(q2.node == "koord-a");
  CHECK(q2.allocation.find("GPU-a0") != std::string::npos);  // two equal cards: the lower minor
  const auto& q3 = record(r, "default/q3-whole-gpu");
  CHECK(q3.status == "refused");
  CHECK(q3.reason == "Insufficient gpu devices");
  const auto& q4 = record(r, "default/q4-ratio-40");
  CHECK(q4.node == "koord-a");
  CHECK(q4.allocation.find("GPU-a1") != std::string::npos);  // minor 0 holds ratio 50 + 35 (8Gi of 23040Mi)
  const auto& q5 = record(r, "default/q5-hami-core-20");
  CHECK(q5.status == "refused");
  // One node each: koord-b lacks HAMi-core, koord-a lacks room.
  CHECK(q5.reason == "GPUIsolationProviderHAMICore not found on the node");
}

// Hand-checked: a reservation pod names its group's card, gpusharingorder
// lifts the node whose group fits, equal scores go to the name first.
TEST_CASE("snapshot: a KAI cluster replays under kai-binpack", "[sim][snapshot][kai]") {
  const Scenario s = snapshot_of("examples/snapshot/kai-cluster.yaml");
  const ClusterSnapshot& snap = *s.snapshot;
  CHECK(snap.nodes.size() == 2);
  CHECK(snap.nodes[0].devices.size() == 4);
  CHECK(snap.running_gpu_pods == 3);
  CHECK(snap.skipped == std::map<std::string, size_t>{{kSkipKaiReservation, 1}});
  const RunResult r = run(s, "kai-binpack");
  CHECK(record(r, "serving/p1-half").node == "kai-1");
  CHECK(record(r, "serving/p1-half").allocation.find("kai-1-gpu1,") != std::string::npos);  // joins the group
  CHECK(record(r, "serving/p2-memory-4000").node == "kai-2");
  CHECK(record(r, "serving/p2-memory-4000").allocation.find("kai-2-gpu0,") != std::string::npos);
  for (const char* refused : {"ml/p3-two-gpus", "serving/p4-two-devices"}) {
    CHECK(record(r, refused).status == "refused");
    CHECK(record(r, refused).reason == "node(s) didn't have enough resources: GPUs");
  }
  CHECK(record(r, "serving/p5-quarter").node == "kai-1");  // a tie: kai-1's name sorts first
  CHECK(record(r, "serving/p5-quarter").allocation.find("kai-1-gpu3,") != std::string::npos);
}

TEST_CASE("snapshot: a Koordinator cluster replays under HAMi and KAI too", "[sim][snapshot][koordinator]") {
  const Scenario s = snapshot_of("examples/snapshot/koordinator-cluster.yaml");
  // HAMi: the Device CRs' cards with 10 slots each; the seed pod is a
  // Koordinator request said in HAMi's terms (50% memory, 50 cores).
  const RunResult hami = run(s, "hami-binpack");
  CHECK(record(hami, "default/q1-seed-example").node == "koord-a");
  // KAI has no compute share: the seed pod's gpu-core is not carried, its
  // ratio becomes a fraction of 0.5.
  const RunResult kai = run(s, "kai-binpack");
  CHECK(record(kai, "default/q1-seed-example").node == "koord-a");
}

TEST_CASE("snapshot run: a namespace's ResourceQuota refuses, waits and releases (HAMi v2.10)",
          "[sim][snapshot][quota]") {
  // ml holds 4000 of its 6000 MiB (the Succeeded pod holds nothing); the
  // running pod leaves after 1h.
  const std::string pods = R"(- apiVersion: v1
  kind: Pod
  metadata:
    name: running
    namespace: ml
    annotations:
      hami.io/vgpu-node: t4
      hami.io/vgpu-devices-allocated: GPU-a,NVIDIA,4000,0:;
      gpuslice.io/expected-duration: 1h
  spec:
    nodeName: t4
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: done
    namespace: ml
    annotations:
      hami.io/vgpu-node: t4
      hami.io/vgpu-devices-allocated: GPU-a,NVIDIA,4000,0:;
  spec:
    nodeName: t4
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}}
  status: {phase: Succeeded}
- apiVersion: v1
  kind: ResourceQuota
  metadata: {name: gpu, namespace: ml}
  spec: {hard: {limits.nvidia.com/gpumem: "6000", pods: "20", requests.cpu: "4"}}
)" + pending_pod("ml", "a-3000", "2026-01-01T10:00:00Z", 3000) +
                           pending_pod("ml", "b-1000", "2026-01-01T10:01:00Z", 1000) +
                           pending_pod("ml", "c-7000", "2026-01-01T10:02:00Z", 7000) +
                           pending_pod("free", "d-9000", "2026-01-01T10:03:00Z", 9000);
  const auto file = std::filesystem::temp_directory_path() / "gpuslice-quota-snapshot.yaml";
  {
    std::ofstream out(file);
    out << cluster(pods);
  }
  SnapshotRunSpec spec;
  spec.snapshot = file.string();
  const Scenario scenario = snapshot_scenario(spec);
  REQUIRE(scenario.snapshot->quotas.size() == 1);
  CHECK(scenario.snapshot->quotas[0].limits == core::QuotaLimits{6000, std::nullopt});
  const RunResult r = run(scenario);
  std::filesystem::remove(file);
  std::map<std::string, const PodRecord*> by_name;
  for (const auto& p : r.pods)
    if (!p.starting) by_name[p.name] = &p;
  // 4000 + 3000 passes 6000: it waits for the running pod to leave...
  CHECK(by_name.at("ml/a-3000")->start == Approx(3600));
  // ...while 1000 fits beside it at once (skip-ahead).
  CHECK(by_name.at("ml/b-1000")->start == Approx(0));
  // 7000 passes the limit itself: no departure helps, refused.
  CHECK(by_name.at("ml/c-7000")->status == "refused");
  CHECK(by_name.at("ml/c-7000")->reason == "ResourceQuotaNotFit");
  CHECK_THAT(by_name.at("ml/c-7000")->shortfall,
             Catch::Matchers::Contains("limits.nvidia.com/gpumem: the pod counts at least 7000 MiB"));
  // Another namespace has no quota: only the card limits it.
  CHECK(by_name.at("free/d-9000")->start == Approx(0));
  CHECK(r.summary["refusals_by_reason"]["ResourceQuotaNotFit"] == 1);
}

// Kubernetes' Priority admission plugin on a hand-written dump: the named
// class's value (a dump's or a built-in system class), else the
// globalDefault class's; spec.priority, when written, is kept as is.
TEST_CASE("snapshot: pods naming PriorityClasses get their values, as admission gives them",
          "[sim][snapshot][preemption]") {
  auto pod = [](const std::string& name, const std::string& spec_extra) {
    return "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " + name +
           ", namespace: default, creationTimestamp: \"2026-01-01T00:00:00Z\"}\n  spec:\n" + spec_extra +
           "    containers:\n    - name: c\n      resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: "
           "1000}}\n";
  };
  const std::string classes = R"(- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: serving}
  value: 1000
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: batch}
  value: 10
  globalDefault: true
  preemptionPolicy: Never
)";
  const std::string pods = pod("named", "    priorityClassName: serving\n") + pod("unnamed", "") +
                           pod("written", "    priorityClassName: serving\n    priority: 5\n") +
                           pod("system", "    priorityClassName: system-node-critical\n") +
                           pod("unknown", "    priorityClassName: gold\n");
  // The classes after the pods, as `kubectl get pods,priorityclasses` lists them.
  const ClusterSnapshot s = parse_snapshot(cluster(pods + classes), "prio.yaml");
  std::map<std::string, PodPriority> by_name;
  for (const auto& q : s.queue) by_name[q.request.name] = q.priority;
  REQUIRE(by_name.size() == 5);
  CHECK(by_name["named"] == PodPriority{1000, false, "serving"});
  CHECK(by_name["unnamed"] == PodPriority{10, true, "batch"});  // the default class, its policy too
  CHECK(by_name["written"] == PodPriority{5, false, "serving"});
  CHECK(by_name["system"] == PodPriority{2000001000, false, "system-node-critical"});
  CHECK(by_name["unknown"] == PodPriority{0, false, "gold"});
  bool warned = false;
  for (const auto& w : s.warnings)
    warned = warned || w.find("'gold' is in no PriorityClass") != std::string::npos;
  CHECK(warned);

  const std::string two_defaults = classes + R"(- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: other}
  value: 3
  globalDefault: true
)";
  CHECK_THROWS_WITH(parse_snapshot(cluster(pods + two_defaults), "prio.yaml"),
                    Catch::Contains("globalDefault") && Catch::Contains("'batch' and 'other'"));
  const std::string bad_value = R"(- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: huge}
  value: 3000000000
)";
  CHECK_THROWS_WITH(parse_snapshot(cluster(pods + bad_value), "prio.yaml"),
                    Catch::Contains("value") && Catch::Contains("not a 32-bit integer"));
}
