// The decision state alone: reservations, their replacement and expiry,
// HAMi's annotations and node lock, and the answers for odd pods.
#include <catch2/catch.hpp>
#include <regex>

#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

ExtenderArgs args_for(const std::string& name, const std::string& uid, const std::string& limits,
                      std::vector<std::string> nodes = {"control-1", "gpu-t4-1"}) {
  ExtenderArgs a;
  a.pod = nlohmann::json::parse(R"({"metadata":{"name":")" + name + R"(","namespace":"default","uid":")" +
                                uid + R"("},"spec":{"containers":[{"name":"main","resources":{"limits":)" +
                                limits + "}}]}}");
  a.node_names = std::move(nodes);
  return a;
}

const std::string kSlice = R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"3000","nvidia.com/gpucores":"30"})";

ExtenderBindingArgs bind_args(const std::string& name, const std::string& uid) {
  return {name, "default", uid, "gpu-t4-1"};
}

class FailingWriter : public ClusterWriter {
 public:
  MemoryWriter inner;
  void patch_pod_annotations(const PodRef& p, const nlohmann::json& a) override {
    inner.patch_pod_annotations(p, a);
  }
  void patch_node_annotations(const std::string& n, const nlohmann::json& a) override {
    inner.patch_node_annotations(n, a);
  }
  void bind(const PodRef&, const std::string&) override {
    throw ApiError(500, "etcdserver: request timed out");
  }
  void record_event(const PodRef& p, const std::string& t, const std::string& r,
                    const std::string& m) override {
    inner.record_event(p, t, r, m);
  }
};

}  // namespace

TEST_CASE("a filter reserves one node and writes HAMi's annotations", "[serve][state]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  FilterOutcome outcome{};
  const auto r = f.state->filter(args_for("vllm-0", "u1", kSlice), &outcome);
  CHECK(outcome == FilterOutcome::Placed);
  REQUIRE(r.nodes);
  CHECK(*r.nodes == std::vector<std::string>{"gpu-t4-1"});
  CHECK(r.failed.empty());  // HAMi answers only the chosen node
  CHECK(f.memory_used(kT4) == base + 3000);
  const auto ann = f.writer.pod_annotations("default", "vllm-0");
  CHECK(ann["hami.io/vgpu-node"] == "gpu-t4-1");
  CHECK(ann["hami.io/vgpu-time"] == "1700000000");
  CHECK(ann["hami.io/vgpu-devices-allocated"] == std::string(kT4) + ",NVIDIA,3000,30:;");
  CHECK(ann["hami.io/vgpu-devices-to-allocate"] == ann["hami.io/vgpu-devices-allocated"]);
  const auto events = f.writer.events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].reason == "FilteringSucceed");
  CHECK_THAT(events[0].message,
             Catch::StartsWith("find fit node(gpu-t4-1), 1 nodes not fit, 1 nodes fit(gpu-t4-1:"));
}

TEST_CASE("a second filter for the same pod replaces its reservation", "[serve][state]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  f.state->filter(args_for("vllm-0", "u1", kSlice));
  f.state->filter(args_for("vllm-0", "u1", kSlice));
  CHECK(f.memory_used(kT4) == base + 3000);
  CHECK(f.state->reservation_count() == 1);
  f.state->filter(args_for("vllm-1", "u2", kSlice));
  CHECK(f.memory_used(kT4) == base + 6000);
  CHECK(f.state->reservation_count() == 2);
}

TEST_CASE("a reservation no bind claims in time is returned", "[serve][state]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  f.state->filter(args_for("vllm-0", "u1", kSlice));
  f.t += std::chrono::seconds(59);
  CHECK(f.memory_used(kT4) == base + 3000);
  f.t += std::chrono::seconds(2);
  CHECK(f.memory_used(kT4) == base);
  CHECK(f.state->expired_count() == 1);
  const std::string error = f.state->bind(bind_args("vllm-0", "u1"));
  CHECK_THAT(error, Catch::Contains("no reservation for pod default/vllm-0"));
  CHECK(f.writer.events().back().reason == "BindingFailed");
  CHECK(f.writer.bound_node("default", "vllm-0").empty());
}

TEST_CASE("bind locks the node as HAMi's device plugin expects, then binds", "[serve][state]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  f.state->filter(args_for("vllm-0", "u1", kSlice));
  CHECK(f.state->bind(bind_args("vllm-0", "u1")).empty());
  CHECK(f.writer.bound_node("default", "vllm-0") == "gpu-t4-1");
  const std::string lock = f.writer.node_annotations("gpu-t4-1")["hami.io/mutex.lock"];
  CHECK(lock == "2023-11-14T22:13:20Z,default,vllm-0");  // RFC 3339 time, namespace, name
  const auto ann = f.writer.pod_annotations("default", "vllm-0");
  CHECK(ann["hami.io/bind-phase"] == "allocating");
  CHECK(ann["hami.io/bind-time"] == "1700000000");
  CHECK(f.writer.events().back().message == "Successfully binding node [gpu-t4-1] to default/vllm-0");
  // Bound: no expiry returns it.
  f.t += std::chrono::minutes(10);
  CHECK(f.memory_used(kT4) == base + 3000);
  CHECK_THAT(f.state->bind(bind_args("vllm-0", "u1")), Catch::Contains("already bound"));

  // Another pod while the lock is young: refused, its reservation returned.
  f.t = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)) + std::chrono::seconds(1);
  f.state->filter(args_for("vllm-1", "u2", kSlice));
  CHECK(f.memory_used(kT4) == base + 6000);
  CHECK(f.state->bind(bind_args("vllm-1", "u2")) == "node gpu-t4-1 has been locked within 5m0s");
  CHECK(f.memory_used(kT4) == base + 3000);
}

TEST_CASE("a failed binding releases the reservation and the lock and says why", "[serve][state]") {
  FailingWriter writer;
  StateOptions o;
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  o.clock = [&] { return t; };
  DecisionState state(o, writer);
  SnapshotFeed(std::string(GPUSLICE_SOURCE_DIR) + "/tests/cli/data/kubectl-cluster.yaml").start(state);
  auto used = [&] {
    for (const auto& c : state.card_use())
      if (c.uuid == kT4) return c.memory_used_mib;
    return int64_t{-1};
  };
  const int64_t base = used();
  state.filter(args_for("vllm-0", "u1", kSlice));
  CHECK(used() == base + 3000);
  const std::string error = state.bind(bind_args("vllm-0", "u1"));
  CHECK_THAT(error, Catch::Contains("etcdserver: request timed out"));
  CHECK(used() == base);
  CHECK(writer.inner.node_annotations("gpu-t4-1")["hami.io/mutex.lock"].is_null());
  CHECK(writer.inner.events().back().reason == "BindingFailed");
  CHECK_THAT(writer.inner.events().back().message, Catch::Contains("etcdserver"));
}

TEST_CASE("pods without HAMi resources pass every node through, as HAMi answers", "[serve][state]") {
  Fixture f;
  FilterOutcome outcome{};
  const auto r =
      f.state->filter(args_for("web", "w1", R"({"cpu":"1"})", {"control-1", "gpu-t4-1", "x"}), &outcome);
  CHECK(outcome == FilterOutcome::PassThrough);
  REQUIRE(r.nodes);
  CHECK(*r.nodes == std::vector<std::string>{"control-1", "gpu-t4-1", "x"});
  CHECK(r.failed.empty());
  CHECK(f.writer.events().back().message == "does not request any resource");
}

TEST_CASE("unknown nodes and pods that fit nowhere get HAMi's reasons", "[serve][state]") {
  Fixture f;
  FilterOutcome outcome{};
  auto r = f.state->filter(args_for("vllm-0", "u1", kSlice, {"nope"}), &outcome);
  CHECK(outcome == FilterOutcome::Unschedulable);
  CHECK_FALSE(r.nodes);
  CHECK(r.failed == std::map<std::string, std::string>{{"nope", "node unregistered"}});
  CHECK(f.writer.events().back().message == "no available node, 1 nodes do not meet");
  r = f.state->filter(args_for("big", "u9", R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"99999"})"),
                      &outcome);
  CHECK(outcome == FilterOutcome::Unschedulable);
  CHECK_FALSE(r.nodes);
  CHECK(r.failed.at("control-1") == "node unregistered");
  CHECK_THAT(r.failed.at("gpu-t4-1"), Catch::Contains("CardInsufficientMemory"));
  CHECK(f.state->reservation_count() == 0);
}

TEST_CASE("on a MIG card a filter writes HAMi v2.10's reservation beside the grants, and holds its slices",
          "[serve][state][mig]") {
  Fixture f("tests/serve/data/mig-cluster.yaml");
  const std::string gpu = "GPU-6a1f2c3e-9b7d-4e21-8c55-0f3b2a1d9e01";
  const std::string two_1g = R"({"nvidia.com/gpu":"2","nvidia.com/gpumem":"9000"})";
  FilterOutcome outcome{};
  f.state->filter(args_for("infer-0", "u1", two_1g, {"h100-mig-1"}), &outcome);
  REQUIRE(outcome == FilterOutcome::Placed);
  auto ann = f.writer.pod_annotations("default", "infer-0");
  CHECK(ann["hami.io/vgpu-devices-allocated"] == gpu + ",NVIDIA,9984,13:" + gpu + ",NVIDIA,9984,13:;");
  CHECK(
      ann["hami.io/vgpu-mig-allocations"] ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":")" + gpu +
          R"(","profile":"1g.10gb","placement":{"start":3,"size":1}},{"containerIndex":0,"deviceIndex":1,"gpuUUID":")" +
          gpu + R"(","profile":"1g.10gb","placement":{"start":2,"size":1}}])");
  // The reservation holds slices 2 and 3: the next 1g goes to slice 1.
  f.state->filter(
      args_for("infer-1", "u2", R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"9000"})", {"h100-mig-1"}),
      &outcome);
  REQUIRE(outcome == FilterOutcome::Placed);
  ann = f.writer.pod_annotations("default", "infer-1");
  CHECK(ann["hami.io/vgpu-mig-allocations"] ==
        R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":")" + gpu +
            R"(","profile":"1g.10gb","placement":{"start":1,"size":1}}])");
  // A pod on a hami-core node gets no MIG annotation (HAMi writes none).
  Fixture plain;
  plain.state->filter(args_for("vllm-0", "u1", kSlice), &outcome);
  CHECK_FALSE(plain.writer.pod_annotations("default", "vllm-0").contains("hami.io/vgpu-mig-allocations"));
}
