// The writer against the API double: what lands on the objects, and how the
// server's refusals come back (status and the Status message).
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <regex>

#include "api_double.hpp"
#include "recording_sink.hpp"

using namespace gpuslice::serve;
using gpuslice::serve::testing::ApiDouble;
using gpuslice::serve::testing::connection_to;
using nlohmann::json;

namespace {
const std::string& kData = gpuslice::serve::testing::kApiData;

const PodRef kVllm{"default", "vllm-0", "6f1c2a9e-0000-4000-8000-000000000001"};

template <class F>
ApiError api_error_of(F&& call) {
  try {
    call();
  } catch (const ApiError& e) {
    return e;
  }
  FAIL("no ApiError");
  return ApiError(-1, "");
}
}  // namespace

TEST_CASE("pod and node annotation patches merge, and a null removes a key", "[serve][writer]") {
  ApiDouble api(kData);
  auto writer = make_kube_writer(connection_to(api));
  const uint64_t before = api.resource_version();
  writer->patch_pod_annotations(kVllm,
                                {{"hami.io/vgpu-node", "node-a"}, {"hami.io/bind-phase", "allocating"}});
  json pod = api.pod("default", "vllm-0");
  CHECK(pod["metadata"]["annotations"]["hami.io/vgpu-node"] == "node-a");
  CHECK(pod["metadata"]["annotations"]["hami.io/bind-phase"] == "allocating");
  CHECK(pod["metadata"]["labels"]["app"] == "vllm");  // the rest of the object is untouched
  CHECK(std::stoull(pod["metadata"]["resourceVersion"].get<std::string>()) > before);

  writer->patch_pod_annotations(kVllm, {{"hami.io/bind-phase", nullptr}});
  pod = api.pod("default", "vllm-0");
  CHECK_FALSE(pod["metadata"]["annotations"].contains("hami.io/bind-phase"));
  CHECK(pod["metadata"]["annotations"]["hami.io/vgpu-node"] == "node-a");

  writer->patch_node_annotations("node-a", {{"hami.io/mutex.lock", "2026-11-23T14:10:00Z,default,vllm-0"}});
  const json node = api.node("node-a");
  CHECK(node["metadata"]["annotations"]["hami.io/mutex.lock"] == "2026-11-23T14:10:00Z,default,vllm-0");
  CHECK(node["metadata"]["annotations"].contains("hami.io/node-nvidia-register"));
}

TEST_CASE("a patch of an unknown object is a 404 with the apiserver's message", "[serve][writer]") {
  ApiDouble api(kData);
  auto writer = make_kube_writer(connection_to(api));
  ApiError e = api_error_of([&] { writer->patch_pod_annotations({"default", "nope", "x"}, {{"a", "b"}}); });
  CHECK(e.status() == 404);
  CHECK(std::string(e.what()) == "pods \"nope\" not found");
  e = api_error_of([&] { writer->patch_node_annotations("node-z", {{"a", "b"}}); });
  CHECK(e.status() == 404);
  CHECK(std::string(e.what()) == "nodes \"node-z\" not found");
}

TEST_CASE("bind creates pods/binding once - a second bind and an unknown pod are refused",
          "[serve][writer]") {
  ApiDouble api(kData);
  auto writer = make_kube_writer(connection_to(api));
  writer->bind(kVllm, "node-a");
  CHECK(api.pod("default", "vllm-0")["spec"]["nodeName"] == "node-a");

  ApiError e = api_error_of([&] { writer->bind(kVllm, "node-b"); });
  CHECK(e.status() == 409);
  CHECK(std::string(e.what()) ==
        "Operation cannot be fulfilled on pods/binding \"vllm-0\": pod vllm-0 is already assigned to node "
        "\"node-a\"");
  CHECK(api.pod("default", "vllm-0")["spec"]["nodeName"] == "node-a");

  e = api_error_of([&] { writer->bind({"default", "ghost", "uid-ghost"}, "node-a"); });
  CHECK(e.status() == 404);
  CHECK(std::string(e.what()) == "pods \"ghost\" not found");
}

TEST_CASE("bind carries the pod's UID: a recreated pod of the same name is not bound", "[serve][writer]") {
  ApiDouble api(kData);
  auto writer = make_kube_writer(connection_to(api));
  ApiError e = api_error_of([&] { writer->bind({"default", "vllm-0", "uid-of-an-older-pod"}, "node-a"); });
  CHECK(e.status() == 409);
  CHECK(std::string(e.what()) ==
        "Operation cannot be fulfilled on pods/binding \"vllm-0\": Precondition failed: UID in precondition: "
        "uid-of-an-older-pod, UID in object meta: 6f1c2a9e-0000-4000-8000-000000000001");
  CHECK_FALSE(api.pod("default", "vllm-0")["spec"].contains("nodeName"));
}

TEST_CASE("events are core/v1 Events on the pod from gpuslice-scheduler", "[serve][writer]") {
  ApiDouble api(kData);
  auto writer = make_kube_writer(connection_to(api));
  writer->record_event(kVllm, "Warning", "FilteringFailed", "no available node, 2 nodes do not meet");
  writer->flush();  // sent by the writer's own thread, as client-go's recorder does
  const auto events = api.events();
  REQUIRE(events.size() == 1);
  const json& ev = events[0];
  CHECK(ev["apiVersion"] == "v1");
  CHECK(ev["kind"] == "Event");
  CHECK(ev["metadata"]["namespace"] == "default");
  CHECK(std::regex_match(ev["metadata"]["name"].get<std::string>(), std::regex(R"(vllm-0\.[0-9a-f]{16})")));
  CHECK(ev["involvedObject"] == json{{"apiVersion", "v1"},
                                     {"kind", "Pod"},
                                     {"name", "vllm-0"},
                                     {"namespace", "default"},
                                     {"uid", "6f1c2a9e-0000-4000-8000-000000000001"}});
  CHECK(ev["reason"] == "FilteringFailed");
  CHECK(ev["message"] == "no available node, 2 nodes do not meet");
  CHECK(ev["type"] == "Warning");
  CHECK(ev["source"]["component"] == "gpuslice-scheduler");
  CHECK(ev["count"] == 1);
  const std::regex rfc3339(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
  CHECK(std::regex_match(ev["firstTimestamp"].get<std::string>(), rfc3339));
  CHECK(ev["lastTimestamp"] == ev["firstTimestamp"]);
}

TEST_CASE("events are queued: recording one never waits on or fails with the API server", "[serve][writer]") {
  KubeConnection nowhere;
  {
    ApiDouble gone(kData);
    nowhere.server = gone.server();
  }  // the port is closed now: every call would fail
  auto writer = make_kube_writer(nowhere);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i)
    CHECK_NOTHROW(writer->record_event(kVllm, "Normal", "FilteringSucceed", "find fit node(node-a)"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  writer->flush();  // each send failed and was reported; none is left queued
  // A patch still fails at once: decisions are not queued.
  CHECK(api_error_of([&] { writer->bind(kVllm, "node-a"); }).status() == 0);
}

TEST_CASE("a wrong token is a 401 - no server is status 0", "[serve][writer]") {
  ApiDouble api(kData);
  KubeConnection c = connection_to(api);
  c.bearer_token = "stale";
  ApiError e = api_error_of([&] { make_kube_writer(c)->bind(kVllm, "node-a"); });
  CHECK(e.status() == 401);
  CHECK(std::string(e.what()) == "Unauthorized");

  KubeConnection nowhere;
  {
    ApiDouble gone(kData);
    nowhere.server = gone.server();
  }  // the port is closed now
  e = api_error_of([&] { make_kube_writer(nowhere)->bind(kVllm, "node-a"); });
  CHECK(e.status() == 0);
  CHECK(std::string(e.what()).find("no answer from http://127.0.0.1:") == 0);
}

TEST_CASE("the token file is read for each connection's headers", "[serve][writer]") {
  ApiDouble api(kData, "from-the-file");
  const std::string path = std::string(GPUSLICE_SERVE_TEST_TMP) + "/token-writer";
  {
    std::ofstream(path) << "from-the-file\n";  // the kubelet writes a trailing newline
  }
  KubeConnection c;
  c.server = api.server();
  c.bearer_token = "ignored-when-a-file-is-set";
  c.bearer_token_file = path;
  make_kube_writer(c)->patch_pod_annotations(kVllm, {{"k", "v"}});
  CHECK(api.pod("default", "vllm-0")["metadata"]["annotations"]["k"] == "v");
}
