#include "gpuslice/sim/openb.hpp"

#include <catch2/catch.hpp>
#include <fstream>
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

TEST_CASE("openb pods map one scalar to memory and cores; resampling reaches tune", "[sim][openb]") {
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
  int64_t demand = 0;
  for (const auto& p : sampled) demand += p.gpu_milli;
  CHECK(demand >= static_cast<int64_t>(1.3 * 6212 * 1000));
  CHECK(demand - sampled.back().gpu_milli < static_cast<int64_t>(1.3 * 6212 * 1000));
  CHECK(sampled.size() > 10000);
  CHECK(sampled.size() < 12000);
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
