// Nominated pods (docs/serve.md#nominated-pods): after kube-scheduler
// preempts for a pod it sets status.nominatedNodeName, and filters every
// pod of no higher priority with the nominated pod added to that node
// (addGENominatedPods: priority >= the pod's, not the pod itself). serve
// holds the room on the cards. Worked by hand on
// tests/serve/data/preempt-cluster.yaml's gpu-c: one 15360 MiB card with
// old-c (priority 10, 8000 MiB) and new-c (10, 7000 MiB): 360 MiB free.
// urgent (priority 100, 10000 MiB) preempted both and is nominated there.
#include <catch2/catch.hpp>
#include <string>

#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

constexpr const char* kCluster = "tests/serve/data/preempt-cluster.yaml";

nlohmann::json pending(const std::string& name, int priority, int mib) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "u-" + name}}},
          {"spec",
           {{"schedulerName", "hami-scheduler"},
            {"priority", priority},
            {"containers",
             {{{"name", "main"},
               {"resources",
                {{"limits", {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", std::to_string(mib)}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

nlohmann::json nominated(const std::string& name, int priority, int mib, const std::string& node) {
  nlohmann::json p = pending(name, priority, mib);
  p["status"]["nominatedNodeName"] = node;
  return p;
}

ExtenderFilterResult filter(Fixture& f, const nlohmann::json& pod) {
  ExtenderArgs args;
  args.pod = pod;
  args.node_names = {"gpu-c"};
  return f.state->filter(args);
}

bool placed(const ExtenderFilterResult& r) {
  return r.nodes && *r.nodes == std::vector<std::string>{"gpu-c"};
}

void delete_victims(Fixture& f) {
  for (const char* victim : {"old-c", "new-c"})
    f.state->pod_changed(
        WatchKind::Deleted,
        nlohmann::json{
            {"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", victim}, {"namespace", "default"}, {"uid", std::string("u-") + victim}}},
            {"spec", {{"nodeName", "gpu-c"}, {"containers", {{{"name", "app"}}}}}}});
}

}  // namespace

TEST_CASE("nominated pods: the room is held against pods of no higher priority", "[serve][nominated]") {
  Fixture f(kCluster);
  SECTION("without a nomination a 300 MiB pod fits beside the victims") {
    CHECK(placed(filter(f, pending("small", 50, 300))));
  }
  f.state->pod_changed(WatchKind::Modified, nominated("urgent", 100, 10000, "gpu-c"));
  SECTION("while the victims terminate, lower and equal priorities are refused the node") {
    // urgent does not fit yet (360 MiB free): the node is kept for it whole,
    // as kube-scheduler's summed requests then exceed it.
    for (int priority : {50, 100}) {
      const ExtenderFilterResult r = filter(f, pending("small", priority, 300));
      CHECK_FALSE(placed(r));
      CHECK(r.failed.at("gpu-c") ==
            "node is held for the nominated pod default/urgent while its victims terminate");
    }
    // A higher priority is not held back (nor is urgent itself).
    CHECK(placed(filter(f, pending("vip", 200, 300))));
  }
  SECTION("once the victims left, the nominated pod's 10000 MiB are held") {
    delete_victims(f);
    // 15360 free: urgent's 10000 leave 5360 to lower pods.
    const ExtenderFilterResult refused = filter(f, pending("mid", 50, 6000));
    CHECK_FALSE(placed(refused));
    CHECK(refused.failed.size() == 1);
    CHECK(placed(filter(f, pending("fits-beside", 50, 5000))));
    // The reservation (5000) and urgent's hold leave 360: urgent itself,
    // whose own nomination is not counted, still fits.
    CHECK(placed(filter(f, nominated("urgent", 100, 10000, "gpu-c"))));
  }
  SECTION("a higher priority takes the freed room, as kube-scheduler lets it") {
    delete_victims(f);
    CHECK(placed(filter(f, pending("vip", 200, 15000))));
  }
  SECTION("the hold ends when the nomination clears, or the pod is deleted") {
    delete_victims(f);
    CHECK_FALSE(placed(filter(f, pending("mid", 50, 6000))));
    SECTION("cleared") { f.state->pod_changed(WatchKind::Modified, pending("urgent", 100, 10000)); }
    SECTION("deleted") { f.state->pod_changed(WatchKind::Deleted, nominated("urgent", 100, 10000, "gpu-c")); }
    SECTION("bound elsewhere") {
      nlohmann::json bound = nominated("urgent", 100, 10000, "gpu-c");
      bound["spec"]["nodeName"] = "gpu-b";
      bound["status"]["phase"] = "Running";
      f.state->pod_changed(WatchKind::Modified, bound);
    }
    CHECK(placed(filter(f, pending("mid", 50, 6000))));
  }
}
