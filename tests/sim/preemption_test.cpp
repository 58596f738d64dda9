// Priorities and preemption in the simulator, against runs worked out by
// hand from kube-scheduler's rules (DefaultPreemption: lower priority only,
// reprieve most important first; PrioritySort's queue) and HAMi's fit.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
std::string path(const std::string& rel) { return std::string(GPUSLICE_SOURCE_DIR) + "/" + rel; }

RunResult run(const Scenario& s, Preemption mode) {
  RunOptions o = scenario_options(s);
  o.preemption = mode;
  return simulate(s, o);
}

const PodRecord& pod(const RunResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.name == name) return p;
  FAIL("no pod " << name);
  return r.pods.front();
}

std::vector<const EventRecord*> preempted(const RunResult& r) {
  std::vector<const EventRecord*> out;
  for (const auto& e : r.events)
    if (e.reason == "Preempted") out.push_back(&e);
  return out;
}

// The bundled example with one template line changed.
Scenario wrong_victim(const std::string& from = "", const std::string& to = "") {
  std::string text = core::codec::read_text_file(path("scenarios/preemption-wrong-victim.yaml"));
  if (!from.empty()) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  return parse_scenario(text, "preemption-wrong-victim.yaml", path("scenarios"));
}
}  // namespace

TEST_CASE("preemption: HAMi's fit evicts the pod whose card holds the preemptor", "[sim][preemption]") {
  // Reprieve in start order: big-batch-0 back (the other card is empty: fits),
  // small-batch-1 back (that card 2000 of 16000 MiB, one slot: fits),
  // small-batch-2 back (that card's slots full, the first card 4000 MiB
  // free): no fit, a victim; small-batch-3 back: still fits. One victim.
  const RunResult r = run(wrong_victim(), Preemption::HamiAware);
  CHECK(r.summary["preemptions"] == 1);
  const auto events = preempted(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->pod == "small-batch-2");
  CHECK(events[0]->type == "Normal");
  CHECK(events[0]->message == "Preempted by a pod on node " + pod(r, "big-batch-0").node);
  CHECK(events[0]->related == "default/inference-4");
  CHECK(events[0]->time == 10);
  CHECK(pod(r, "inference-4").start == 10);
  CHECK(pod(r, "small-batch-2").preempted == 1);
  // Made again by its controller, it waits for the serving pod to leave.
  CHECK(pod(r, "small-batch-2").start == 610);
  CHECK(pod(r, "small-batch-2").status == "completed");
  // It had run 8 s on a fifth of a... 2000 of 16000 MiB: its GPU share.
  const double share = static_cast<double>(pod(r, "small-batch-2").gpu_milli) / 1000.0;
  CHECK(r.summary["gpu_hours_lost_to_preemption"].get<double>() == Approx(8 * share / 3600));
  const auto& by_class = r.summary["pending_seconds_by_priority_class"];
  CHECK(by_class["serving"]["max"] == 0);
  CHECK(by_class["batch"]["max"] == 600);  // small-batch-2, queued again at 10 s
}

TEST_CASE("preemption: counting slots evicts a pod whose removal frees no card that holds it",
          "[sim][preemption]") {
  // kube-scheduler's slot count: all four removed, the pod fits; reprieve
  // big-batch-0, small-batch-1, small-batch-2 (three slots: fits) and
  // small-batch-3 (four: no room), so small-batch-3 is the victim. Its slot
  // sits beside big-batch-0's 12000 MiB: HAMi's fit still refuses the pod,
  // small-batch-3 is made again and returns to that slot at once, and the
  // serving pod waits for big-batch-0 to leave at 3600 s.
  const RunResult r = run(wrong_victim(), Preemption::Kube);
  CHECK(r.summary["preemptions"] == 1);
  const auto events = preempted(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->pod == "small-batch-3");
  CHECK(pod(r, "small-batch-3").start == 10);
  CHECK(pod(r, "inference-4").start == 3600);
  CHECK(r.summary["pending_seconds_by_priority_class"]["serving"]["max"] == 3590);
}

TEST_CASE("preemption: off, Never and equal priorities preempt nobody", "[sim][preemption]") {
  SECTION("off") {
    const RunResult r = run(wrong_victim(), Preemption::Off);
    CHECK(r.summary["preemptions"] == 0);
    CHECK(pod(r, "inference-4").start == 3600);
  }
  SECTION("preemptionPolicy Never on the class") {
    const RunResult r =
        run(wrong_victim("serving: {value: 1000}", "serving: {value: 1000, preemption_policy: Never}"),
            Preemption::HamiAware);
    CHECK(r.summary["preemptions"] == 0);
    CHECK(pod(r, "inference-4").start == 3600);
  }
  SECTION("the same priority as every running pod") {
    const RunResult r =
        run(wrong_victim("priority_class: serving", "priority_class: batch"), Preemption::HamiAware);
    CHECK(r.summary["preemptions"] == 0);
    CHECK(pod(r, "inference-4").start == 3600);
    CHECK_FALSE(r.summary.contains("pending_seconds_by_priority_class"));  // one class: nothing to tell apart
  }
}

TEST_CASE("preemption: a bare pod preempted ends - the queue is by priority", "[sim][preemption]") {
  SECTION("bare victim") {
    const RunResult r = run(wrong_victim("small-batch: {gpu: 1, gpumem: 2000}",
                                         "small-batch: {gpu: 1, gpumem: 2000, controller: false}"),
                            Preemption::HamiAware);
    CHECK(pod(r, "small-batch-2").status == "preempted");
    CHECK(pod(r, "small-batch-2").end == 10);
    CHECK(pod(r, "small-batch-2").start == 2);
  }
  SECTION("a waiting serving pod goes before a batch pod queued earlier") {
    // Preemption off: small-batch-5 (at 5 s) and inference-4 (at 10 s) both
    // wait; at 3600 s big-batch-0 leaves and the serving pod, first by
    // priority, takes the freed card.
    const RunResult r = run(
        wrong_victim(
            "- {at: 10, duration: 600, template: inference}",
            "- {at: 5, duration: 600, template: big-batch}\n- {at: 10, duration: 600, template: inference}"),
        Preemption::Off);
    CHECK(pod(r, "inference-5").start == 3600);
    CHECK(pod(r, "big-batch-4").start > 3600);
  }
}

TEST_CASE("preemption: priority classes are checked as the API server checks them", "[sim][preemption]") {
  CHECK_THROWS_WITH(
      wrong_victim("priority_class: serving", "priority_class: gold"),
      Catch::Contains("templates.inference.priority_class") && Catch::Contains("no PriorityClass 'gold'"));
  CHECK_THROWS_WITH(wrong_victim("priority_class: serving", "priority_class: serving, priority: 5"),
                    Catch::Contains("give priority or priority_class, not both"));
  CHECK_THROWS_WITH(wrong_victim("serving: {value: 1000}", "serving: {value: 1000, global_default: true}"),
                    Catch::Contains("already the global default"));
  CHECK_THROWS_WITH(wrong_victim("serving: {value: 1000}", "serving: {value: 2000000000}"),
                    Catch::Contains("priority_classes.serving.value"));
  CHECK_THROWS_WITH(
      wrong_victim("serving: {value: 1000}", "serving: {value: 1000, preemption_policy: Sometimes}"),
      Catch::Contains("use Never or PreemptLowerPriority"));
}

namespace {
// Two one-card nodes (16000 MiB, 2 slots). low-0 (priority 10) and mid-1
// (priority 100) each take a node's card (12000 MiB: two cannot share one);
// urgent-2 (priority 1000, 10000 MiB) arrives at 10 s and fits nowhere.
// `guard`: the templates whose pods a PodDisruptionBudget allowing no
// disruption covers (pdb_protected).
Scenario two_nodes(bool guard_low, bool guard_mid) {
  auto guarded = [](bool g) { return g ? std::string(", pdb_protected: true") : std::string(); };
  const std::string text = R"(name: pdb-decides-the-node
policy: hami-binpack
queue: skip-ahead
fleet:
- template: {name: gpu, model: NVIDIA-Tesla T4, cards: 1, card_memory_mib: 16000, slots: 2}
  count: 2
templates:
  low: {gpu: 1, gpumem: 12000, priority: 10)" +
                           guarded(guard_low) +
                           R"(}
  mid: {gpu: 1, gpumem: 12000, priority: 100)" +
                           guarded(guard_mid) +
                           R"(}
  urgent: {gpu: 1, gpumem: 10000, priority: 1000}
pods:
- {at: 0, duration: 3600, template: low}
- {at: 1, duration: 3600, template: mid}
- {at: 10, duration: 600, template: urgent}
)";
  return parse_scenario(text, "two-nodes.yaml", path("scenarios"));
}

// One card of 16000 MiB, 4 slots: low-0 (priority 10), mid-1 and mid-2
// (priority 50, started at 1 s and 2 s) hold 4000 MiB each; urgent-3
// (priority 1000) asks 8000 MiB at 10 s, where 4000 MiB are free.
Scenario one_card(bool guard_low) {
  const std::string text = R"(name: pdb-reprieve
policy: hami-binpack
queue: skip-ahead
fleet:
- template: {name: gpu, model: NVIDIA-Tesla T4, cards: 1, card_memory_mib: 16000, slots: 4}
  count: 1
templates:
  low: {gpu: 1, gpumem: 4000, priority: 10)" +
                           std::string(guard_low ? ", pdb_protected: true" : "") + R"(}
  mid: {gpu: 1, gpumem: 4000, priority: 50}
  urgent: {gpu: 1, gpumem: 8000, priority: 1000}
pods:
- {at: 0, duration: 3600, template: low}
- {at: 1, duration: 3600, template: mid}
- {at: 2, duration: 3600, template: mid}
- {at: 10, duration: 600, template: urgent}
)";
  return parse_scenario(text, "one-card.yaml", path("scenarios"));
}
}  // namespace

TEST_CASE("preemption: a disruption budget decides the node", "[sim][preemption][pdb]") {
  SECTION("no budget: the node whose victim has the lowest priority") {
    // One victim on each node; pickOneNodeForPreemption's second rule
    // (lowest highest-victim priority) takes low-0's node. low-0, made
    // again, waits for urgent-2 to leave at 610 s and returns there.
    const RunResult r = run(two_nodes(false, false), Preemption::HamiAware);
    const auto events = preempted(r);
    REQUIRE(events.size() == 1);
    CHECK(events[0]->pod == "low-0");
    CHECK(pod(r, "urgent-2").start == 10);
    CHECK(pod(r, "low-0").start == 610);
    CHECK(pod(r, "urgent-2").node == pod(r, "low-0").node);
  }
  SECTION("low-0 guarded: the node with no violation, though its victim is more important") {
    // low-0's node has one PDB violation, mid-1's none: the first rule
    // (fewest violations) decides.
    const RunResult r = run(two_nodes(true, false), Preemption::HamiAware);
    const auto events = preempted(r);
    REQUIRE(events.size() == 2);
    CHECK(events[0]->pod == "mid-1");
    CHECK(events[0]->related == "default/urgent-2");
    CHECK(events[0]->message == "Preempted by a pod on node " + pod(r, "urgent-2").node);
    CHECK(pod(r, "urgent-2").start == 10);
    // A budget steers preemption, it never forbids it: mid-1, made again
    // (priority 100), fits nowhere and evicts low-0, its only candidate,
    // breaking the budget (kube-scheduler does the same).
    CHECK(events[1]->pod == "low-0");
    CHECK(events[1]->related == "default/mid-1");
    CHECK(events[1]->time == 10);
    CHECK(pod(r, "mid-1").start == 10);
    CHECK(pod(r, "urgent-2").node != pod(r, "mid-1").node);
    CHECK(pod(r, "low-0").start == 610);  // back when urgent-2 leaves
  }
  SECTION("both guarded: one violation each, the victims' priorities decide again") {
    const RunResult r = run(two_nodes(true, true), Preemption::HamiAware);
    const auto events = preempted(r);
    REQUIRE(events.size() == 1);
    CHECK(events[0]->pod == "low-0");
  }
  SECTION("counting slots, the budget decides the same way") {
    // kube: each node has 2 slots, one free: the pod "fits" on slots alone,
    // so no node is a candidate and nothing is preempted.
    const RunResult r = run(two_nodes(true, false), Preemption::Kube);
    CHECK(preempted(r).empty());
  }
}

TEST_CASE("preemption: a victim a budget guards is reprieved first", "[sim][preemption][pdb]") {
  SECTION("no budget: most important first, the least important is the victim") {
    // All three gone: 16000 MiB free. Reprieve mid-1 (50, started 1 s):
    // 12000 free, fits; mid-2 (50, 2 s): 8000 free, fits; low-0 (10):
    // 4000 free, no fit: low-0 is the victim.
    const RunResult r = run(one_card(false), Preemption::HamiAware);
    const auto events = preempted(r);
    REQUIRE(events.size() == 1);
    CHECK(events[0]->pod == "low-0");
  }
  SECTION("low-0 guarded: reprieved before the others, mid-2 goes") {
    // filterPodsWithPDBViolation: low-0 would break its budget (allowed 0
    // -> -1), so it is reprieved first: 12000 free, fits; then mid-1: 8000,
    // fits; mid-2: 4000, no fit: mid-2 is the victim.
    const RunResult r = run(one_card(true), Preemption::HamiAware);
    const auto events = preempted(r);
    REQUIRE(events.size() == 2);
    CHECK(events[0]->pod == "mid-2");
    CHECK(events[0]->related == "default/urgent-3");
    CHECK(pod(r, "urgent-3").start == 10);
    // mid-2, made again (priority 50), finds the card full and evicts
    // low-0 (priority 10) after all: the budget only ordered the reprieve.
    CHECK(events[1]->pod == "low-0");
    CHECK(events[1]->related == "default/mid-2");
  }
}

namespace {
// The bundled dump with one piece of text changed, run as
// `gpuslice simulate --snapshot FILE` runs it (snapshot_scenario).
RunResult run_dump(const std::string& from = "", const std::string& to = "") {
  std::string text = core::codec::read_text_file(path("examples/snapshot/pdb-preemption.yaml"));
  if (!from.empty()) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("gpuslice-pdb-" + std::to_string(std::hash<std::string>{}(text)) + ".yaml"))
                               .string();
  std::ofstream(file) << text;
  SnapshotRunSpec spec;
  spec.snapshot = file;
  const Scenario s = snapshot_scenario(spec);
  std::filesystem::remove(file);
  return run(s, Preemption::HamiAware);
}

std::string victim(const RunResult& r) {
  const auto events = preempted(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->related == "default/urgent");
  return events[0]->pod + " on " + events[0]->message.substr(events[0]->message.rfind(' ') + 1);
}
}  // namespace

TEST_CASE("preemption: a dump's PodDisruptionBudget, recomputed from its pods", "[sim][preemption][pdb]") {
  // db-0 (priority 10, gpu-a) and batch-0 (priority 100, gpu-b) each hold
  // 12000 of 16000 MiB; urgent asks 10000 MiB.
  SECTION("minAvailable 1 of one healthy pod: no disruption allowed, gpu-b is taken") {
    // healthy 1 - desired 1 = 0 (the stale status says 1): db-0's node has
    // one violation, batch-0's none.
    const RunResult r = run_dump();
    CHECK(victim(r) == "batch-0 on gpu-b");
    CHECK(pod(r, "default/urgent").node == "gpu-b");
    CHECK(pod(r, "default/urgent").start == 0);
    CHECK(r.summary["snapshot"]["warnings"].empty());
  }
  SECTION("no budget: the lowest-priority victim's node") {
    CHECK(victim(run_dump("kind: PodDisruptionBudget", "kind: PodDisruptionBudgetList")) == "db-0 on gpu-a");
  }
  SECTION("maxUnavailable 1: the ReplicaSet's one pod may go") {
    // expected 1 (db-0's controller), desired 1 - 1 = 0, allowed 1 - 0 = 1.
    CHECK(victim(run_dump("minAvailable: 1", "maxUnavailable: 1")) == "db-0 on gpu-a");
  }
  SECTION("minAvailable 0: one disruption allowed") {
    CHECK(victim(run_dump("minAvailable: 1", "minAvailable: 0")) == "db-0 on gpu-a");
  }
  SECTION("an empty selector: every pod for the controller, none for preemption") {
    CHECK(victim(run_dump("    selector:\n      matchLabels:\n        app: db\n", "    selector: {}\n")) ==
          "db-0 on gpu-a");
  }
  SECTION("a selector matching nothing there") {
    CHECK(victim(run_dump("        app: db\n  status:", "        app: web\n  status:")) == "db-0 on gpu-a");
  }
  SECTION("matchExpressions: In (db, cache)") {
    CHECK(victim(
              run_dump("      matchLabels:\n        app: db\n",
                       "      matchExpressions:\n      - {key: app, operator: In, values: [db, cache]}\n")) ==
          "batch-0 on gpu-b");
  }
  SECTION("a policy/v1beta1 budget is left out with a warning") {
    const RunResult r = run_dump("apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n");
    CHECK(victim(r) == "db-0 on gpu-a");
    REQUIRE(r.summary["snapshot"]["warnings"].size() == 1);
    CHECK_THAT(r.summary["snapshot"]["warnings"][0].get<std::string>(),
               Catch::Contains("PodDisruptionBudget default/db is policy/v1beta1, not policy/v1: left out"));
  }
  SECTION("a malformed selector names the file, line and field") {
    CHECK_THROWS_WITH(run_dump("        app: db\n  status:", "        app: -db\n  status:"),
                      Catch::Contains("spec.selector.matchLabels.app"));
  }
}

namespace {
std::string node_yaml(const std::string& name) {
  return "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: " + name +
         "\n    annotations:\n      hami.io/node-nvidia-register: "
         "'[{\"id\":\"GPU-" +
         name +
         "\",\"count\":10,\"devmem\":16000,\"devcore\":100,\"type\":\"NVIDIA-Tesla T4\",\"health\":true}]'\n";
}
std::string gpu_pod(const std::string& name, const std::string& node, int priority, int mib, bool db) {
  std::string y =
      "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name + "\n    namespace: default\n";
  if (db)
    y += "    labels: {app: db}\n    ownerReferences:\n    - {apiVersion: apps/v1, kind: ReplicaSet, name: "
         "db-rs, "
         "uid: rs-1, controller: true}\n";
  if (!node.empty())
    y += "    annotations:\n      hami.io/bind-phase: success\n      hami.io/vgpu-node: " + node +
         "\n      hami.io/vgpu-devices-allocated: GPU-" + node + ",NVIDIA," + std::to_string(mib) + ",0:;\n";
  else
    y += "    creationTimestamp: \"2026-11-28T10:00:0" + name.substr(name.size() - 1) + "Z\"\n";
  y += "  spec:\n" + (node.empty() ? std::string() : "    nodeName: " + node + "\n") +
       "    priority: " + std::to_string(priority) +
       "\n    containers:\n    - name: main\n      resources:\n        limits: {nvidia.com/gpu: 1, "
       "nvidia.com/gpumem: " +
       std::to_string(mib) + "}\n  status:\n    phase: " + (node.empty() ? "Pending" : "Running") + "\n";
  return y;
}
}  // namespace

TEST_CASE("preemption: a budget's allowance follows the run, not the dump's status",
          "[sim][preemption][pdb]") {
  // db-0 on gpu-a and db-1 on gpu-b (priority 10, a ReplicaSet's, 12000
  // MiB), batch-0 on gpu-c (priority 100, 12000 MiB); budget db:
  // maxUnavailable 1 (expected 2, desired 1, healthy 2: allowed 1).
  // urgent-1 and urgent-2 (priority 1000, 10000 MiB) are pending.
  // urgent-1: no node breaks the budget; the db nodes' victims have the
  // lowest priority: one db pod goes (which, the random offset decides),
  // made again, pending (healthy 1: allowed 0). urgent-2: the other db
  // pod would now break the budget; gpu-c breaks none: batch-0 goes.
  // Read once from the dump's status (1), both evictions would take db pods.
  const std::string dump =
      "apiVersion: v1\nkind: List\nitems:\n" + node_yaml("gpu-a") + node_yaml("gpu-b") + node_yaml("gpu-c") +
      gpu_pod("db-0", "gpu-a", 10, 12000, true) + gpu_pod("db-1", "gpu-b", 10, 12000, true) +
      gpu_pod("batch-0", "gpu-c", 100, 12000, false) + gpu_pod("urgent-1", "", 1000, 10000, false) +
      gpu_pod("urgent-2", "", 1000, 10000, false) +
      "- apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata: {name: db, namespace: default}\n"
      "  spec:\n    maxUnavailable: 1\n    selector:\n      matchLabels: {app: db}\n"
      "  status: {disruptionsAllowed: 1}\n";
  Scenario s;
  s.name = "allowance";
  s.queue = QueueDiscipline::SkipAhead;
  s.snapshot = parse_snapshot(dump, "allowance.yaml");
  set_fleet_counts(s, {}, {});
  const RunResult r = run(s, Preemption::HamiAware);
  const auto events = preempted(r);
  REQUIRE(events.size() == 2);
  CHECK((events[0]->pod == "db-0" || events[0]->pod == "db-1"));
  CHECK(events[0]->related == "default/urgent-1");
  CHECK(events[1]->pod == "batch-0");
  CHECK(events[1]->related == "default/urgent-2");
  CHECK(events[1]->message == "Preempted by a pod on node gpu-c");
}

TEST_CASE("preemption: evicting a MIG pod frees its instance", "[sim][preemption][mig]") {
  // The bundled H100 in MIG mode (1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb on 8
  // memory slices). A batch pod takes the 7g.80gb (every slice); a serving
  // pod asking 40000 MiB needs a 3g.40gb, and no placement is free. With
  // the batch pod gone the card is empty, so it is the victim; the
  // preemptor then runs on the card. Before evictions freed MIG slices in
  // preemption's what-if, no eviction ever seemed to help on a MIG card.
  const std::string text = R"(name: mig-preemption
policy: hami-binpack
fleet:
- template: {name: h100-mig, model: H100-SXM5-80GB, cards: 1, card_memory_mib: 81559, mode: mig}
  count: 1
priority_classes:
  batch: {value: 0, global_default: true}
  serving: {value: 1000}
templates:
  whole: {gpu: 1, gpumem: 70000}
  half: {gpu: 1, gpumem: 40000, priority_class: serving}
pods:
- {at: 0, duration: 3600, template: whole}
- {at: 10, duration: 600, template: half}
)";
  const Scenario s = parse_scenario(text, "mig-preemption.yaml", path("scenarios"));
  const RunResult aware = run(s, Preemption::HamiAware);
  CHECK(aware.summary["preemptions"] == 1);
  const auto events = preempted(aware);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->pod == pod(aware, "whole-0").name);
  CHECK(pod(aware, "half-1").status != "failed");
  CHECK_FALSE(pod(aware, "half-1").node.empty());
  CHECK(pod(aware, "whole-0").preempted == 1);
  // Without preemption the serving pod cannot run while the batch pod holds the card.
  const RunResult off = run(s, Preemption::Off);
  CHECK(off.summary["preemptions"] == 0);
  CHECK(pod(off, "half-1").start >= 3600);
}
