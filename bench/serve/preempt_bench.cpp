// The preempt verb on loopback: kube-scheduler's nodeCacheCapable payload
// (NodeNameToMetaVictims) naming 100 candidate nodes with 10 victims each,
// answered by `gpuslice serve`'s server with the victims HAMi's fit needs.
// Each node: 8 A100-80GB cards, 10 running pods of priority 0..9 (one
// 60000 MiB pod per card on cards 0-7, then two 10000 MiB pods on cards 0
// and 1); the preemptor (priority 100) asks 2 cards x 40000 MiB, so every
// node needs evictions and the reprieve walks all ten pods.
//   preempt_bench [--requests N] [--nodes N] [--seconds S]
#include <fmt/format.h>
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/serve/memory_cluster.hpp"
#include "gpuslice/serve/server.hpp"
#include "measure.hpp"

using namespace gpuslice;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kPodsPerNode = 10;

nlohmann::json node_object(int i) {
  std::vector<core::Device> cards;
  for (int c = 0; c < 8; ++c)
    cards.push_back(
        core::healthy_card(fmt::format("GPU-{:05d}-{}", i, c), c, "NVIDIA-A100-SXM4-80GB", 10, 81920));
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", fmt::format("node-{:05d}", i)},
        {"annotations",
         {{std::string(core::codec::kRegisterAnnotation), core::codec::encode_registration_json(cards)}}}}}};
}

nlohmann::json running_pod(int node, int k) {
  const int card = k < 8 ? k : k - 8;
  const int mib = k < 8 ? 60000 : 10000;
  const std::string node_name = fmt::format("node-{:05d}", node);
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", fmt::format("run-{}-{}", node, k)},
        {"namespace", "default"},
        {"uid", fmt::format("uid-{}-{}", node, k)},
        {"annotations",
         {{"hami.io/vgpu-node", node_name},
          {"hami.io/vgpu-devices-allocated", fmt::format("GPU-{:05d}-{},NVIDIA,{},0:;", node, card, mib)}}}}},
      {"spec",
       {{"nodeName", node_name},
        {"priority", k},
        {"containers",
         {{{"name", "app"},
           {"resources",
            {{"limits", {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", std::to_string(mib)}}}}}}}}}},
      {"status", {{"phase", "Running"}, {"startTime", fmt::format("2026-11-01T00:00:{:02d}Z", k)}}}};
}

std::string preempt_args(int nodes) {
  nlohmann::json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "urgent"}, {"namespace", "default"}, {"uid", "uid-urgent"}}},
      {"spec",
       {{"priority", 100},
        {"containers",
         {{{"name", "main"},
           {"resources", {{"limits", {{"nvidia.com/gpu", "2"}, {"nvidia.com/gpumem", "40000"}}}}}}}}}}};
  nlohmann::json map = nlohmann::json::object();
  for (int n = 0; n < nodes; ++n) {
    nlohmann::json pods = nlohmann::json::array();
    for (int k = 0; k < kPodsPerNode; ++k) pods.push_back({{"UID", fmt::format("uid-{}-{}", n, k)}});
    map[fmt::format("node-{:05d}", n)] = {{"Pods", pods}, {"NumPDBViolations", 0}};
  }
  return nlohmann::json{{"Pod", pod}, {"NodeNameToMetaVictims", map}}.dump();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 2000, nodes = 100;
  double seconds = 10;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (has_value && !std::strcmp(argv[i], "--requests"))
      requests = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--nodes"))
      nodes = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[++i]);
    else {
      fmt::print(stderr, "preempt_bench: unknown option {} (--requests N, --nodes N, --seconds S)\n",
                 argv[i]);
      return 2;
    }
  }
  serve::MemoryWriter writer;
  serve::DecisionState state(serve::StateOptions{}, writer);
  std::vector<nlohmann::json> node_list, pod_list;
  for (int n = 0; n < nodes; ++n) {
    node_list.push_back(node_object(n));
    for (int k = 0; k < kPodsPerNode; ++k) pod_list.push_back(running_pod(n, k));
  }
  state.replace_all(node_list, pod_list);
  serve::Metrics metrics;
  serve::ServerOptions o;
  o.listen = {"127.0.0.1", 0};
  o.metrics_listen = {"127.0.0.1", 0};
  serve::Server server(state, metrics, o);
  server.start();
  const std::string body = preempt_args(nodes);
  httplib::Client client("127.0.0.1", server.port());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // else Nagle and delayed ACKs add ~40 ms a request
  // CPU time of the process (client and server threads) over the timed
  // requests: on a shared machine the tail is waiting for a core, this is
  // what a request costs.
  auto cpu_seconds = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return gpuslice::bench::cpu_seconds(u);
  };
  double cpu_start = 0;
  std::string first_answer;
  std::vector<double> ms;
  int errors = 0;
  const auto start = Clock::now();
  for (int r = 0; r < requests + 20; ++r) {
    const auto t = Clock::now();
    auto res = client.Post("/preempt", body, "application/json");
    const double took = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    if (!res || res->status != 200) {
      ++errors;
      continue;
    }
    if (first_answer.empty()) first_answer = res->body;
    if (r == 19) cpu_start = cpu_seconds();
    if (r >= 20) ms.push_back(took);  // the first 20 warm up
    if (std::chrono::duration<double>(Clock::now() - start).count() > seconds) break;
  }
  const double cpu_ms =
      (cpu_seconds() - cpu_start) * 1000.0 / static_cast<double>(std::max<size_t>(1, ms.size()));
  server.stop();
  // The same request in this process, without HTTP: decode, decision, answer.
  std::vector<double> decode_ms, decide_ms, encode_ms;
  for (int r = 0; r < 300; ++r) {
    auto t = Clock::now();
    const serve::ExtenderPreemptionArgs args = serve::decode_preemption_args(body);
    auto t2 = Clock::now();
    const serve::ExtenderPreemptionResult result = state.preempt(args);
    auto t3 = Clock::now();
    const std::string out = serve::encode_preemption_result(result);
    auto t4 = Clock::now();
    decode_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t).count());
    decide_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
    encode_ms.push_back(std::chrono::duration<double, std::milli>(t4 - t3).count());
  }
  const auto answer = nlohmann::json::parse(first_answer.empty() ? "{}" : first_answer);
  size_t kept = 0, victims = 0;
  if (answer.contains("NodeNameToMetaVictims"))
    for (const auto& [node, v] : answer["NodeNameToMetaVictims"].items()) {
      ++kept;
      victims += v["Pods"].size();
    }
  fmt::print(
      "preempt: {} candidate nodes x {} victims offered (request {:.1f} kB); answer keeps {} nodes, "
      "{} victims\n",
      nodes, kPodsPerNode, static_cast<double>(body.size()) / 1000.0, kept, victims);
  fmt::print(
      "  {} requests, p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms, errors {}; CPU {:.3f} ms a "
      "request (client and server)\n",
      ms.size(), percentile(ms, 0.50), percentile(ms, 0.90), percentile(ms, 0.99), percentile(ms, 1.0),
      errors, cpu_ms);
  fmt::print("  in process (medians of 300): decode {:.3f} ms, decision {:.3f} ms, answer {:.3f} ms\n",
             percentile(decode_ms, 0.5), percentile(decide_ms, 0.5), percentile(encode_ms, 0.5));
}
