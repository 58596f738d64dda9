#include "gpuslice/sim/openb.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
std::string read(const std::string& rel) {
  std::ifstream in(std::string(GPUSLICE_SOURCE_DIR) + "/scenarios/data/openb/" + rel);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("the openb node list loads as the study describes it", "[sim][openb]") {
  auto fleet = load_openb_nodes(read("openb_node_list_gpu_node.csv"), "gpu_node.csv");
  CHECK(fleet.size() == 1213);
  CHECK(fleet.device_count() == 6212);
  const auto& first = fleet.node(0);
  CHECK(first.name == "openb-node-0000");
  CHECK(first.capacity.cpu_milli == 64000);
  CHECK(first.devices.size() == 2);
  CHECK(first.devices[0].type == "NVIDIA-P100");
  CHECK(first.devices[0].memory_mib == 16384);
}

TEST_CASE("openb pods map one scalar to memory and cores - resampling reaches tune", "[sim][openb]") {
  auto fleet = load_openb_nodes(read("openb_node_list_gpu_node.csv"), "gpu_node.csv");
  OpenbOptions o;
  o.resample = false;
  auto rows = load_openb_pods(read("openb_pod_list_default.csv"), "default.csv", fleet, o);
  CHECK(rows.size() == 8152);
  size_t cpu_only = 0, share = 0, whole = 0, multi = 0;
  for (const auto& p : rows) {
    if (p.kind == "cpu-only")
      ++cpu_only;
    else if (p.kind == "share")
      ++share;
    else if (p.kind == "whole-gpu")
      ++whole;
    else
      ++multi;
  }
  CHECK(cpu_only == 1088);
  CHECK(share == 3078);
  CHECK(whole == 3911);
  CHECK(multi == 75);
  // openb-pod-0001: 460 milli -> 46% cores, 46% memory.
  const auto& p1 = rows[1];
  CHECK(p1.request.name == "openb-pod-0001");
  CHECK(p1.request.containers[0].cores == 46);
  CHECK(p1.request.containers[0].memory_percent == 46);
  CHECK(p1.gpu_milli == 460);
  o.resample = true;
  o.seed = 42;
  auto sampled = load_openb_pods(read("openb_pod_list_default.csv"), "default.csv", fleet, o);
  // The study's workload: every trace pod once (shuffled), then draws with
  // replacement while the next draw keeps demand within 1.3 x capacity.
  int64_t demand = 0;
  for (const auto& p : sampled) demand += p.gpu_milli;
  const int64_t target = static_cast<int64_t>(1.3 * 6212 * 1000);
  CHECK(demand <= target);
  CHECK(demand > target - 1000);  // the draw that stopped it asked for more than was left
  REQUIRE(sampled.size() > rows.size());
  std::set<std::string> first_pass;
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK_FALSE(sampled[i].resampled);
    first_pass.insert(sampled[i].request.name.substr(0, sampled[i].request.name.rfind('-')));
  }
  CHECK(first_pass.size() == rows.size());
  CHECK(sampled[rows.size()].resampled);
  CHECK(sampled[0].request.name != "openb-pod-0000-0");  // shuffled
}

TEST_CASE("bad openb rows name file, line and column", "[sim][openb]") {
  const std::string header = "sn,cpu_milli,memory_mib,gpu,model\n";
  try {
    load_openb_nodes(header + "a,64000,1024,2,T4\nb,lots,1024,2,T4\n", "nodes.csv");
    FAIL("accepted");
  } catch (const core::InputError& e) {
    CHECK(e.line() == 3);
    CHECK(e.field() == "cpu_milli");
  }
  CHECK_THROWS_AS(load_openb_nodes("sn,cpu_milli\n", "x.csv"), core::InputError);
  CHECK_THROWS_AS(load_openb_nodes(header + "a,1,1\n", "x.csv"), core::InputError);
}

// The FGD study's finding on its own trace: fragmentation-aware placement
// allocates more before the fleet refuses pods than blind or dot-product
// placement, and random placement does worst. Seed 42, tune 1.3.
TEST_CASE("openb default: FGD beats BestFit and DotProd, Random is last", "[sim][openb][policy]") {
  const auto fleet = load_openb_nodes(read("openb_node_list_gpu_node.csv"), "gpu_node.csv");
  const auto pods = load_openb_pods(read("openb_pod_list_default.csv"), "pod_list_default.csv", fleet, {});
  const auto ordered = study_node_order(fleet, 42);
  auto alloc130 = [&](const std::string& policy) {
    RunOptions o;
    o.policy = policy;
    o.card_use = false;
    const auto r = simulate(ordered, pods, o);
    return r.summary["alloc_ratio_at_130_pct"].get<double>();
  };
  const double fgd = alloc130("fgd"), bestfit = alloc130("bestfit"), dotprod = alloc130("dotprod"),
               random = alloc130("random");
  CHECK(fgd == Approx(95.27).margin(0.01));  // the artifact's seed 42: 95.29
  CHECK(fgd > bestfit);
  CHECK(bestfit > dotprod);
  CHECK(dotprod > random);
  CHECK(random > 80);
}

TEST_CASE("fragmentation is tracked over time and per card use is logged", "[sim][openb][metrics]") {
  const auto fleet = load_openb_nodes(read("openb_node_list_gpu_node.csv"), "gpu_node.csv");
  const auto pods = load_openb_pods(read("openb_pod_list_default.csv"), "pod_list_default.csv", fleet, {});
  RunOptions o;
  o.policy = "bestfit";
  const auto r = simulate(fleet, pods, o);
  REQUIRE(r.timeline.size() > 100);
  // An idle fleet is already 13-14 % fragmented in the study's measure: the
  // CPU-only typical pods (13 % of the trace) count every free GPU, and
  // typical pods that name a GPU model cannot use other nodes (the
  // artifact publishes 13.99 % at 0 % arrived for BestFit, seed 42). Filling
  // the fleet leaves less free GPU to count.
  const double first_frag = r.timeline.front().frag_gpu_pct;
  const double final_frag = r.summary["final_frag_gpu_pct"].get<double>();
  CHECK(first_frag == Approx(13.99).margin(0.3));
  CHECK(final_frag < first_frag);
  CHECK(final_frag < 100 - r.summary["final_alloc_gpu_pct"].get<double>() + 1e-9);  // only free GPU fragments
  CHECK(r.summary["frag_ratio_by_arrived_pct"].size() == 131);
  // One card_use row per card a placement charged; replaying them rebuilds the final use.
  size_t charged_cards = 0;
  for (const auto& p : r.pods)
    if (p.status == "running")
      charged_cards += static_cast<size_t>(std::count(p.allocation.begin(), p.allocation.end(), ':'));
  CHECK(r.card_use.size() == charged_cards);
  CHECK(r.node_names.size() == fleet.size());
}

TEST_CASE("openb mapping: three 333-milli shares fit the card they fit in one dimension", "[sim][openb]") {
  const std::string nodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,T4\n";
  const std::string pods =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "a,1000,1024,1,333\nb,1000,1024,1,333\nc,1000,1024,1,333\n";
  const auto fleet = load_openb_nodes(nodes, "n.csv");
  OpenbOptions o;
  o.resample = false;
  const auto w = load_openb_pods(pods, "p.csv", fleet, o);
  for (const char* policy : {"fgd", "bestfit", "gpupacking", "hami-binpack"}) {
    RunOptions ro;
    ro.policy = policy;
    const auto r = simulate(fleet, w, ro);
    INFO(policy);
    CHECK(r.summary["placements"] == 3);
  }
}

TEST_CASE("the study's workload needs GPU demand: CPU-only traces are refused, not looped on",
          "[sim][openb]") {
  const auto fleet = load_openb_nodes("sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,T4\n", "n.csv");
  const std::string pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,0,0\n";
  CHECK_THROWS_AS(load_openb_pods(pods, "p.csv", fleet, {}), core::InputError);
}
