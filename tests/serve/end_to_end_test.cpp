// gpuslice serve's decision state on the Kubernetes API side, end to end
// against the in-process API server double: the feed lists and watches the
// double, a filter's annotations and events land on it, a bind writes
// HAMi's node lock, the bind phase and the pods/binding, and later changes
// (the bound pod coming back through the watch, a pod deleted) keep the
// state's accounting right.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "api_double.hpp"
#include "gpuslice/serve/decision_state.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;
using nlohmann::json;

namespace {

const std::string kA10 = "GPU-a0000000-0000-4000-8000-000000000000";  // node-a's one card

int64_t memory_used(DecisionState& state, const std::string& uuid) {
  for (const auto& c : state.card_use())
    if (c.uuid == uuid) return c.memory_used_mib;
  return -1;
}

// The watch delivers on the feed's thread: wait (bounded) for the state to see it.
bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace

TEST_CASE("serve end to end against the API double: list, filter, bind, watch", "[serve][e2e]") {
  ApiDouble api(kApiData);
  const KubeConnection connection = connection_to(api);
  KubeFeedOptions quick;
  quick.backoff_initial_seconds = 0.01;
  quick.backoff_max_seconds = 0.05;

  auto writer = make_kube_writer(connection);
  StateOptions options;
  options.release_lock_after_bind = false;  // HAMi's device plugin releases it in a cluster
  DecisionState state(options, *writer);
  auto feed = make_kube_feed(connection, quick);
  feed->start(state);
  REQUIRE(state.ready());
  // ml/train-7 runs on node-a with 8000 MiB of its A10.
  CHECK(memory_used(state, kA10) == 8000);

  // kube-scheduler's filter call for the Pending default/vllm-0 (3000 MiB, 30 %).
  ExtenderArgs args;
  args.pod = api.pod("default", "vllm-0");
  const std::string uid = args.pod["metadata"]["uid"];
  args.node_names = {"node-a", "node-b"};
  FilterOutcome outcome{};
  const auto result = state.filter(args, &outcome);
  CHECK(outcome == FilterOutcome::Placed);
  REQUIRE(result.nodes);
  CHECK(*result.nodes == std::vector<std::string>{"node-a"});
  CHECK(memory_used(state, kA10) == 11000);

  // The decision is on the API server as HAMi writes it.
  json pod = api.pod("default", "vllm-0");
  const json& ann = pod["metadata"]["annotations"];
  CHECK(ann["hami.io/vgpu-node"] == "node-a");
  CHECK(ann["hami.io/vgpu-devices-allocated"] == kA10 + ",NVIDIA,3000,30:;");
  CHECK(ann["hami.io/vgpu-devices-to-allocate"] == ann["hami.io/vgpu-devices-allocated"]);
  auto has_event = [&](const std::string& reason) {
    writer->flush();  // events are sent by the writer's own thread
    for (const auto& e : api.events())
      if (e["reason"] == reason && e["involvedObject"]["name"] == "vllm-0") return true;
    return false;
  };
  CHECK(has_event("FilteringSucceed"));

  // kube-scheduler's bind call.
  CHECK(state.bind({"vllm-0", "default", uid, "node-a"}).empty());
  pod = api.pod("default", "vllm-0");
  CHECK(pod["spec"]["nodeName"] == "node-a");
  CHECK(pod["metadata"]["annotations"]["hami.io/bind-phase"] == "allocating");
  CHECK(pod["metadata"]["annotations"].contains("hami.io/bind-time"));
  const std::string lock = api.node("node-a")["metadata"]["annotations"]["hami.io/mutex.lock"];
  CHECK_THAT(lock, Catch::EndsWith(",default,vllm-0"));

  // The watch brings the bound pod back: counted once, not twice.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(memory_used(state, kA10) == 11000);
  // A pod deleted on the API server frees its card in the state.
  api.delete_pod("ml", "train-7");
  CHECK(eventually([&] { return memory_used(state, kA10) == 3000; }));
  feed->stop();
}
