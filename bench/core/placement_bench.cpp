// Placement throughput on the openb fleet (1,213 GPU nodes): pods from the
// openb default trace placed one after another with usage updated after each
// pod; a pod leaves when `live` pods are running so the fleet stays busy
// (steady state, both placements and refusals). Prints placements/s for
// HAMi binpack and spread, on the simulator's path (Detail::Minimal) and on
// the CLI/extender path (Detail::Full: every node's reason and the events).
//
// usage: placement_bench [openb-dir] [pods=200000] [live=6000]
#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpuslice/core/dialects/hami/policy.hpp"
#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice::core;

namespace {

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    if (line.back() == ',') f.emplace_back();
    rows.push_back(std::move(f));
  }
  return rows;
}

int64_t card_mib(const std::string& model) {
  if (model == "V100M32") return 32768;
  if (model == "A10") return 24576;
  if (model == "G2" || model == "G3") return 32768;  // undisclosed; as documented for the simulator
  return 16384;                                      // T4, P100, V100M16, G1
}

Cluster openb_fleet(const std::string& dir) {
  Cluster c;
  for (const auto& r : read_csv(dir + "/openb_node_list_gpu_node.csv")) {
    Node n;
    n.name = r[0];
    n.capacity = {std::stoll(r[1]), std::stoll(r[2])};
    const int gpus = std::stoi(r[3]);
    for (int i = 0; i < gpus; ++i)
      n.devices.push_back(
          healthy_card(fmt::format("{}-gpu{}", r[0], i), i, "NVIDIA-" + r[4], 10, card_mib(r[4])));
    c.add_node(std::move(n));
  }
  return c;
}

std::vector<PodRequest> openb_pods(const std::string& dir) {
  std::vector<PodRequest> pods;
  for (const auto& r : read_csv(dir + "/openb_pod_list_default.csv")) {
    PodRequest p;
    p.name = r[0];
    p.host = {std::stoll(r[1]), std::stoll(r[2])};
    ContainerRequest c;
    const int gpus = std::stoi(r[3]);
    const int milli = std::stoi(r[4]);
    if (gpus > 0) {
      c.count = gpus;
      if (milli >= 1000) {
        c.memory_percent = 100;
        c.cores = 100;
      } else {
        c.memory_percent = std::max(1, milli / 10);
        c.cores = milli / 10;
      }
    }
    p.containers.push_back(c);
    pods.push_back(std::move(p));
  }
  return pods;
}

void run(const std::string& dir, const std::string& node_policy, Detail detail, size_t total, size_t live) {
  Cluster cluster = openb_fleet(dir);
  const auto pods = openb_pods(dir);
  HamiPolicy policy(HamiPolicyConfig{node_policy, "spread", true, false, "hami-" + node_policy});
  Scheduler scheduler;
  struct Running {
    size_t node;
    size_t pod;
    PodAllocation allocation;
  };
  std::deque<Running> running;
  size_t placed = 0, refused = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < total; ++i) {
    const PodRequest& pod = pods[i % pods.size()];
    Decision d = scheduler.place(cluster, pod, policy, detail);
    if (d.placed()) {
      Scheduler::commit(cluster, pod, d, policy);
      running.push_back({*d.node, i % pods.size(), std::move(d.allocation)});
      ++placed;
    } else {
      ++refused;
    }
    if (running.size() > live) {
      const auto& r = running.front();
      cluster.release(r.node, r.allocation, pods[r.pod].host);
      running.pop_front();
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(
      "{:<8} {:<8} {:>9} pods {:>8} placed {:>8} refused {:>8.3f} s {:>12.0f} placements/s {:>8.2f} us/pod\n",
      node_policy, detail == Detail::Full ? "full" : "minimal", total, placed, refused, secs,
      static_cast<double>(total) / secs, 1e6 * secs / static_cast<double>(total));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : GPUSLICE_OPENB_DIR;
  const size_t total = argc > 2 ? std::stoul(argv[2]) : 200000;
  const size_t live = argc > 3 ? std::stoul(argv[3]) : 6000;
  fmt::print("openb fleet from {}, {} live pods at most\n", dir, live);
  const bool minimal_only = argc > 4 && std::string(argv[4]) == "minimal";
  for (const char* policy : {"binpack", "spread"}) {
    run(dir, policy, Detail::Minimal, total, live);
    if (!minimal_only) run(dir, policy, Detail::Full, total / 20, live);
  }
  return 0;
}
