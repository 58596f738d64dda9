// Shared by the serve tests: repository files, and a decision state over a
// snapshot with a clock the test moves.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gpuslice/serve/decision_state.hpp"
#include "gpuslice/serve/memory_cluster.hpp"

namespace gpuslice::serve::testing {

inline std::string repo_file(const std::string& rel) {
  std::ifstream in(std::string(GPUSLICE_SOURCE_DIR) + "/" + rel);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Fixture {
  MemoryWriter writer;
  std::chrono::system_clock::time_point t =
      std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  std::unique_ptr<DecisionState> state;

  explicit Fixture(const std::string& snapshot_rel = "tests/cli/data/kubectl-cluster.yaml",
                   std::string policy = "hami", size_t full_report_nodes = StateOptions{}.full_report_nodes) {
    StateOptions o;
    o.policy = std::move(policy);
    o.full_report_nodes = full_report_nodes;
    o.clock = [this] { return t; };
    state = std::make_unique<DecisionState>(o, writer);
    SnapshotFeed(std::string(GPUSLICE_SOURCE_DIR) + "/" + snapshot_rel).start(*state);
  }
  // Memory in use on one card, from the state itself.
  int64_t memory_used(const std::string& uuid) {
    for (const auto& c : state->card_use())
      if (c.uuid == uuid) return c.memory_used_mib;
    FAIL("no card " << uuid);
    return -1;
  }
};

inline constexpr const char* kT4 = "GPU-859b872c-0ba2-97b0-10b4-8b7185c55039";

}  // namespace gpuslice::serve::testing
