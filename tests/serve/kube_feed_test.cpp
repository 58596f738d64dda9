// The feed against the API double: paged list, watch from the list's
// version, bookmarks, reconnects, relist on 410 Gone, and a prompt stop().
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "api_double.hpp"
#include "recording_sink.hpp"

using namespace gpuslice::serve;
using gpuslice::serve::testing::ApiDouble;
using gpuslice::serve::testing::connection_to;
using gpuslice::serve::testing::RecordingSink;
using nlohmann::json;

namespace {

const std::string& kData = gpuslice::serve::testing::kApiData;

KubeFeedOptions quick() {
  KubeFeedOptions o;
  o.list_page_size = 2;  // the double holds 3 pods: two pages
  o.backoff_initial_seconds = 0.01;
  o.backoff_max_seconds = 0.05;
  return o;
}

std::vector<std::string> names(const std::vector<json>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) out.push_back(o["metadata"]["name"].get<std::string>());
  return out;
}

// Polls a condition the double changes (it has no condition variable for tests).
bool eventually(const std::function<bool()>& ready) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

json pending_pod(const std::string& name) {
  json pod = json::parse(
      R"({"metadata":{"namespace":"default"},"spec":{"containers":[{"name":"main","image":"busybox",)"
      R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}})");
  pod["metadata"]["name"] = name;
  pod["metadata"]["uid"] = "uid-" + name;
  return pod;
}

}  // namespace

TEST_CASE("the feed lists nodes and pods page by page, then streams watch events", "[serve][feed]") {
  ApiDouble api(kData);
  RecordingSink sink;
  auto feed = make_kube_feed(connection_to(api), quick());
  feed->start(sink);

  // replace_all arrives before start() returns, with every page.
  CHECK(sink.replacements == 1);
  CHECK(names(sink.nodes) == std::vector<std::string>{"node-a", "node-b"});
  // The double orders pods by namespace/name: default/vllm-0, ml/done-1, ml/train-7.
  CHECK(names(sink.pods) == std::vector<std::string>{"vllm-0", "done-1", "train-7"});
  CHECK(api.list_calls("pods") == 2);  // limit=2 over 3 pods
  CHECK(api.list_calls("nodes") == 1);
  // Items as the seam promises: the apiserver's JSON, typed like watch objects.
  CHECK(sink.pods[1]["kind"] == "Pod");
  CHECK(sink.pods[1]["status"]["phase"] ==
        "Succeeded");  // terminated pods pass through; the state drops them
  CHECK(sink.nodes[0]["metadata"]["annotations"].contains("hami.io/node-nvidia-register"));

  api.add_pod(pending_pod("new-1"));
  REQUIRE(sink.wait([&] { return sink.pod_events.size() == 1; }));
  CHECK(sink.pod_events[0].first == WatchKind::Added);
  CHECK(sink.pod_events[0].second["metadata"]["name"] == "new-1");

  api.delete_pod("default", "new-1");
  REQUIRE(sink.wait([&] { return sink.pod_events.size() == 2; }));
  CHECK(sink.pod_events[1].first == WatchKind::Deleted);
  CHECK(sink.node_events.empty());
  CHECK(sink.replacements == 1);
  feed->stop();
}

TEST_CASE("a recorded watch stream is read line by line - a bookmark only moves the version on",
          "[serve][feed]") {
  ApiDouble api(kData);
  RecordingSink sink;
  auto feed = make_kube_feed(connection_to(api), quick());
  feed->start(sink);
  std::ifstream in(kData + "/watch_pods.jsonl");
  std::string line;
  while (std::getline(in, line)) api.replay_watch_line("pods", line);
  REQUIRE(sink.wait([&] { return sink.pod_events.size() == 1; }));
  CHECK(sink.pod_events[0].second["metadata"]["name"] == "vllm-1");
  // After the bookmark (1043) a cut watch resumes from 1043: nothing is delivered twice.
  api.drop_watches();
  REQUIRE(eventually([&] { return api.watch_calls("pods") >= 2; }));
  api.add_pod(pending_pod("after-cut"));
  REQUIRE(sink.wait([&] { return sink.pod_events.size() == 2; }));
  CHECK(sink.pod_events[1].second["metadata"]["name"] == "after-cut");
  CHECK(sink.pod_events[1].second["metadata"]["resourceVersion"] == "1044");
  CHECK(sink.replacements == 1);
  feed->stop();
}

TEST_CASE("a watch that is too old (410 Gone) makes the feed list again", "[serve][feed]") {
  for (bool http_status : {false, true}) {
    DYNAMIC_SECTION((http_status ? "HTTP 410" : "ERROR event with a 410 Status")) {
      ApiDouble api(kData);
      api.gone_as_http_status(http_status);
      RecordingSink sink;
      auto feed = make_kube_feed(connection_to(api), quick());
      feed->start(sink);
      api.expire_history();  // the resumed watch is now older than the server's history
      api.add_pod(pending_pod("missed-while-gone"));
      // Both watches go Gone; one relist serves them (a second may follow
      // if a watch reconnects in between, never a stale one).
      REQUIRE(sink.wait([&] { return sink.replacements >= 2 && sink.pods.size() == 4; }));
      const auto listed = names(sink.pods);
      CHECK(std::find(listed.begin(), listed.end(), "missed-while-gone") != listed.end());
      // ...and watches on from the new list.
      api.delete_pod("default", "vllm-0");
      REQUIRE(sink.wait(
          [&] { return !sink.pod_events.empty() && sink.pod_events.back().first == WatchKind::Deleted; }));
      CHECK(sink.pod_events.back().second["metadata"]["name"] == "vllm-0");
      feed->stop();
    }
  }
}

TEST_CASE("stop() ends idle watches promptly", "[serve][feed]") {
  ApiDouble api(kData);
  RecordingSink sink;
  auto feed = make_kube_feed(connection_to(api), quick());  // watches would idle for 300 s
  feed->start(sink);
  REQUIRE(eventually([&] { return api.open_watches() == 2; }));
  const auto t0 = std::chrono::steady_clock::now();
  feed->stop();
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took < std::chrono::seconds(1));
}

TEST_CASE("the first list failing is an ApiError with the server's message", "[serve][feed]") {
  ApiDouble api(kData, "the-right-token");
  KubeConnection c = connection_to(api);
  c.bearer_token = "a-wrong-token";
  RecordingSink sink;
  auto feed = make_kube_feed(c, quick());
  try {
    feed->start(sink);
    FAIL("start() returned without a cluster");
  } catch (const ApiError& e) {
    CHECK(e.status() == 401);
    CHECK(std::string(e.what()) == "Unauthorized");
  }
  CHECK(sink.replacements == 0);
}
