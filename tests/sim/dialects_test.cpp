// One workload asked in HAMi's, Koordinator's and KAI's words
// (scenarios/dialects-mixed.yaml, 200 pods, nothing leaving) under
// hami-binpack, fgd, koordinator and kai-binpack: each run's pods.csv, read
// back from disk, keeps every card within capacity in the terms of the
// scheduler that placed it (docs/dialects.md, "Comparison").
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/kai/policy.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/core/translate.hpp"
#include "gpuslice/sim/csv_table.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CardHeld {
  int pods = 0;
  int64_t memory_mib = 0;
  int32_t cores = 0;
  bool whole = false;  // a pod took the card whole (all its memory and compute)
};

// Each card's holdings from pods.csv's allocation column (HAMi's notation of
// every dialect's grants).
std::map<std::string, CardHeld> holdings(const std::string& pods_csv, const core::Cluster& fleet) {
  std::map<std::string, const core::Device*> cards;
  for (size_t n = 0; n < fleet.size(); ++n)
    for (const auto& d : fleet.node(n).devices) cards[d.uuid] = &d;
  const CsvTable t = read_csv_table(pods_csv, "pods.csv");
  const int allocation = t.column("allocation", "pods.csv");
  std::map<std::string, CardHeld> held;
  for (const auto& row : t.rows) {
    if (row[static_cast<size_t>(allocation)].empty()) continue;
    for (const auto& container : core::codec::decode_allocation_text(row[static_cast<size_t>(allocation)]))
      for (const auto& g : container) {
        REQUIRE(cards.count(g.uuid));
        const core::Device& d = *cards[g.uuid];
        CardHeld& h = held[g.uuid];
        ++h.pods;
        h.memory_mib += g.memory_mib;
        h.cores += g.cores;
        h.whole = h.whole || (g.cores >= d.cores && g.memory_mib >= d.memory_mib);
      }
  }
  return held;
}

}  // namespace

TEST_CASE("dialects: one mixed workload under HAMi, FGD, Koordinator and KAI stays within capacity",
          "[sim][dialects]") {
  const Scenario s = load_scenario(std::string(GPUSLICE_SOURCE_DIR) + "/scenarios/dialects-mixed.yaml");
  std::map<std::string, const core::Device*> cards;
  for (size_t n = 0; n < s.fleet.size(); ++n)
    for (const auto& d : s.fleet.node(n).devices) cards[d.uuid] = &d;
  const auto dir = std::filesystem::temp_directory_path() / "gpuslice-dialects-test";
  for (const std::string policy : {"hami-binpack", "fgd", "koordinator", "kai-binpack"}) {
    INFO("policy " << policy);
    RunOptions o;
    o.policy = policy;
    o.seed = s.seed;
    o.queue = s.queue;
    const RunResult r = simulate(s, o);
    const auto out = dir / policy;
    std::filesystem::create_directories(out);
    write_outputs(r, out.string());
    const auto held = holdings(read_file(out / "pods.csv"), s.fleet);
    size_t placed = 0, refused = 0;
    for (const auto& p : r.pods) (p.start >= 0 ? placed : refused) += 1;
    CHECK(placed + refused == 200);
    CHECK(placed > 150);  // the fleet takes most of it under every scheduler
    CHECK_FALSE(held.empty());
    for (const auto& [uuid, h] : held) {
      INFO("card " << uuid << ": " << h.pods << " pods, " << h.memory_mib << " MiB, " << h.cores
                   << "% cores");
      const core::Device& d = *cards.at(uuid);
      if (policy == "koordinator") {
        // DeviceShare: gpu-core within the card; bytes within it but for
        // what truncated ratios let ratio grants add (1% per pod at most).
        CHECK(h.cores <= d.cores);
        CHECK(h.memory_mib <= d.memory_mib + d.memory_mib * h.pods / 100);
      } else if (policy == "kai-binpack") {
        // KAI: a whole GPU holds one pod; a GPU group's pods share the
        // memory KAI reads for the node (floored to a multiple of 100 MiB).
        if (h.whole)
          CHECK(h.pods == 1);
        else
          CHECK(h.memory_mib <= d.memory_mib - d.memory_mib % 100);
      } else {
        // HAMi's fit (FGD keeps it): slots, memory and cores.
        CHECK(h.pods <= d.slots);
        CHECK(h.memory_mib <= d.memory_mib);
        CHECK(h.cores <= d.cores);
      }
    }
  }
  std::filesystem::remove_all(dir);
}

// Found by fuzz_manifest: a HAMi fleet replayed under KAI, on a node whose
// cards register under 100 MiB, reads a GPU memory of 0 MiB (KAI floors it to
// a multiple of 100); a request in MiB is then an infinite portion of a GPU.
// It is refused for both, with no float-to-integer overflow (clang's
// UBSan, the fuzz build's, reports one; GCC's -fsanitize=undefined does not
// check float casts).
TEST_CASE("dialects: KAI refuses a MiB request on a node of no GPU memory", "[sim][dialects]") {
  core::Node node;
  node.name = "n1";
  node.capacity = {8000, 32768};
  core::Device card;
  card.uuid = "GPU-n1-0";
  card.type = "NVIDIA-Tesla T4";
  card.slots = 10;
  card.memory_mib = 64;
  card.cores = 100;
  card.healthy = true;
  node.devices.push_back(card);
  core::Cluster cluster;
  cluster.add_node(node);
  core::PodRequest pod;
  pod.name = "p";
  core::ContainerRequest c;
  c.count = 1;
  c.memory_mib = 2000;
  pod.containers.push_back(c);
  REQUIRE_FALSE(core::translate(pod, core::Dialect::Kai));
  auto policy = core::make_policy("kai-binpack");
  core::Scheduler scheduler;
  const core::Decision d = scheduler.place(cluster, pod, *policy, core::Detail::Full);
  CHECK_FALSE(d.placed());
  REQUIRE(d.failed.size() == 1);
  // Neither GPUs nor GPU memory for it (KAI's FittingError, in its order).
  CHECK(d.failed.front().second.format() ==
        "node(s) didn't have enough resources: GPU memory, node(s) didn't have enough resources: GPUs");
}
