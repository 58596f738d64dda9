// The extender over HTTP on loopback: golden payloads, bad requests, and
// 64 concurrent filters that together ask more than the cluster has.
#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "gpuslice/serve/server.hpp"
#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

struct Running {
  Fixture fixture;
  Metrics metrics;
  Server server;
  explicit Running(size_t max_body = 1u << 20, size_t full_report_nodes = StateOptions{}.full_report_nodes)
      : fixture("tests/cli/data/kubectl-cluster.yaml", "hami", full_report_nodes),
        server(*fixture.state, metrics, [&] {
          ServerOptions o;
          o.listen = {"127.0.0.1", 0};
          o.metrics_listen = {"127.0.0.1", 0};
          o.max_body_bytes = max_body;
          return o;
        }()) {
    server.start();
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", server.port()); }
};

}  // namespace

TEST_CASE("golden filter payloads answer in the form kube-scheduler sent", "[serve][http]") {
  for (const char* file : {"filter_nodenames.json", "filter_nodenames_lower.json", "filter_nodes.json",
                           "filter_nodes_lower.json"}) {
    INFO(file);
    Running r;
    auto c = r.client();
    auto res = c.Post("/filter", repo_file(std::string("tests/serve/data/") + file), "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
    const auto j = nlohmann::json::parse(res->body);
    CHECK(j["Error"] == "");
    if (std::string(file).find("nodenames") != std::string::npos) {
      CHECK(j["NodeNames"] == nlohmann::json::array({"gpu-t4-1"}));
      CHECK(j["Nodes"].is_null());
    } else {
      REQUIRE(j["Nodes"]["items"].size() == 1);
      CHECK(j["Nodes"]["items"][0]["metadata"]["name"] == "gpu-t4-1");
      CHECK(j["NodeNames"].is_null());
    }
    const char* bind = std::string(file).find("lower") != std::string::npos ? "bind_lower.json" : "bind.json";
    res = c.Post("/bind", repo_file(std::string("tests/serve/data/") + bind), "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(nlohmann::json::parse(res->body) == nlohmann::json{{"Error", ""}});
    CHECK(r.fixture.writer.bound_node("default", "vllm-0") == "gpu-t4-1");
  }
}

TEST_CASE("bad requests get a clean JSON error, never a crash", "[serve][http][errors]") {
  Running r(4096);
  auto c = r.client();
  auto res = c.Post("/filter", "{bad", "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  CHECK_THAT(nlohmann::json::parse(res->body)["Error"].get<std::string>(), Catch::Contains("not valid JSON"));
  res = c.Post("/bind", "[]", "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  res = c.Post("/filter", std::string(8192, ' '), "application/json");
  REQUIRE(res);
  CHECK(res->status == 413);
  res = c.Post("/bind", R"({"PodName":"ghost","PodNamespace":"default","PodUID":"g","Node":"gpu-t4-1"})",
               "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK_THAT(nlohmann::json::parse(res->body)["Error"].get<std::string>(), Catch::Contains("no reservation"));
  res = c.Get("/readyz");
  REQUIRE(res);
  CHECK(res->status == 200);
  res = c.Get("/healthz");
  REQUIRE(res);
  CHECK(res->status == 200);
  httplib::Client m("127.0.0.1", r.server.metrics_port());
  res = m.Get("/metrics");
  REQUIRE(res);
  CHECK_THAT(res->body, Catch::Contains("hami_gpu_memory_allocated_bytes{device_index=\"0\""));
  CHECK_THAT(res->body, Catch::Contains("gpuslice_filter_decisions_total{reason=\"error\"} 1"));
  CHECK_THAT(res->body, Catch::Contains("hami_scheduler_bind_total{result=\"error\"} 2"));
}

TEST_CASE("64 concurrent filters never hand out the same capacity", "[serve][http][race]") {
  // Both ways a filter decides: the full report, and the fast path of large filters.
  const size_t full_report_nodes = GENERATE(StateOptions{}.full_report_nodes, size_t{0});
  INFO("full_report_nodes " << full_report_nodes);
  Running r(1u << 20, full_report_nodes);
  // What is free on the one registered card before the race.
  CardUse before;
  for (const auto& c : r.fixture.state->card_use())
    if (c.uuid == kT4) before = c;
  const int64_t ask_mib = 1000;
  const int32_t ask_cores = 5;
  const int32_t card_slots = 10;  // the snapshot registers count 10
  const int64_t fit = std::min<int64_t>({card_slots - before.slots_used,
                                         (before.memory_mib - before.memory_used_mib) / ask_mib,
                                         (before.cores - before.cores_used) / ask_cores});
  REQUIRE(fit > 0);
  REQUIRE(fit < 64);  // together the 64 pods ask more than there is

  std::atomic<int> placed{0}, refused{0}, broken{0};
  std::mutex why_mutex;
  std::vector<std::string> why;
  std::vector<std::thread> threads;
  for (int i = 0; i < 64; ++i)
    threads.emplace_back([&, i] {
      auto c = r.client();
      const std::string body =
          R"({"Pod":{"metadata":{"name":"p)" + std::to_string(i) + R"(","namespace":"default","uid":"race-)" +
          std::to_string(i) +
          R"("},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"1000","nvidia.com/gpucores":"5"}}}]}},"NodeNames":["gpu-t4-1"]})";
      auto res = c.Post("/filter", body, "application/json");
      if (!res || res->status != 200) {
        std::lock_guard lock(why_mutex);
        why.push_back(res ? "status " + std::to_string(res->status) + " " + res->body
                          : "transport " + httplib::to_string(res.error()));
        return void(++broken);
      }
      const auto j = nlohmann::json::parse(res->body);
      if (j["NodeNames"].is_array() && j["NodeNames"].size() == 1)
        ++placed;
      else if (j["FailedNodes"].is_object())
        ++refused;
      else {
        std::lock_guard lock(why_mutex);
        why.push_back(res->body);
        ++broken;
      }
    });
  for (auto& t : threads) t.join();
  INFO((why.empty() ? std::string() : why.front()));
  CHECK(broken == 0);
  CHECK(placed == fit);
  CHECK(refused == 64 - fit);
  for (const auto& c : r.fixture.state->card_use()) {
    INFO(c.uuid);
    CHECK(c.memory_used_mib <= c.memory_mib);
    CHECK(c.cores_used <= c.cores);
    if (c.uuid == kT4) {
      CHECK(c.memory_used_mib == before.memory_used_mib + fit * ask_mib);
      CHECK(c.slots_used == before.slots_used + fit);
    }
  }
  CHECK(r.fixture.state->reservation_count() == static_cast<size_t>(fit));
}
