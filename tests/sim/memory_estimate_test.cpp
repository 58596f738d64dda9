// The memory guard's parts: which limit binds, the message, the run's size
// read from a scenario before anything is generated.
#include "gpuslice/sim/memory_estimate.hpp"

#include <catch2/catch.hpp>
#include <chrono>

#include "gpuslice/cli/memory_guard.hpp"
#include "gpuslice/sim/scenario.hpp"

using namespace gpuslice;

namespace {
constexpr uint64_t GiB = 1ull << 30;
}

TEST_CASE("memory room is the least of MemAvailable and the rlimits and the cgroup less their use") {
  cli::MemoryFacts f;
  CHECK(cli::memory_room_of(f).bytes == UINT64_MAX);
  CHECK(cli::memory_room_of(f).limit.empty());
  f.mem_available = 20 * GiB;
  CHECK(cli::memory_room_of(f).bytes == 20 * GiB);
  CHECK(cli::memory_room_of(f).limit == "the machine's available memory (MemAvailable)");
  // ulimit -v 4 GiB with 1 GiB already mapped: 3 GiB left.
  f.rlimit_as = 4 * GiB;
  f.address_space_used = 1 * GiB;
  CHECK(cli::memory_room_of(f).bytes == 3 * GiB);
  CHECK(cli::memory_room_of(f).limit == "the address-space limit (RLIMIT_AS, ulimit -v)");
  // A container's 8 GiB of which 6 are used: 2 GiB left, the tightest.
  f.cgroup_limit = 8 * GiB;
  f.cgroup_used = 6 * GiB;
  f.cgroup_file = "/sys/fs/cgroup/memory.max";
  CHECK(cli::memory_room_of(f).bytes == 2 * GiB);
  CHECK(cli::memory_room_of(f).limit == "the cgroup's limit (/sys/fs/cgroup/memory.max)");
  // Use above the limit leaves nothing (not a wrapped-around huge figure).
  f.rlimit_data = 1 * GiB;
  f.data_used = 2 * GiB;
  CHECK(cli::memory_room_of(f).bytes == 0);
}

TEST_CASE("the guard refuses an estimate above the room and names both figures") {
  const cli::MemoryRoom room{2 * GiB, "the cgroup's limit (memory.max)"};
  CHECK_NOTHROW(cli::guard_memory("a run", 2 * GiB, "fewer pods", room));
  try {
    cli::guard_memory("a run of 10 pods on 1 nodes", 3 * GiB, "fewer pods", room);
    FAIL("not refused");
  } catch (const cli::MemoryLimitError& e) {
    CHECK(e.estimate_bytes() == 3 * GiB);
    CHECK(e.limit_bytes() == 2 * GiB);
    CHECK(std::string(e.what()) ==
          "memory guard: a run of 10 pods on 1 nodes needs about 3.0 GiB, but the cgroup's limit "
          "(memory.max) leaves 2.0 GiB; refused before it starts (lower it: fewer pods)");
  }
  CHECK(cli::size_text(1536ull << 20) == "1.5 GiB");
  CHECK(cli::size_text(320ull << 20) == "320 MiB");
}

TEST_CASE("the run's size is read from the scenario without generating it") {
  const std::string yaml = R"(name: big
fleet:
- template: {name: l4, model: NVIDIA L4, cards: 4, card_memory_mib: 23034}
  count: 3
templates:
  small: {gpu: 1, gpumem: 3000}
generator:
  pods: 50000000
  mix:
  - {template: small}
)";
  const auto start = std::chrono::steady_clock::now();
  const sim::Scenario s = sim::parse_scenario(yaml, "big.yaml", ".");
  const sim::RunSize size = sim::run_size(s);
  CHECK(size.pods == 50'000'000);
  CHECK(size.nodes == 3);
  // Parsing and sizing do not build the 50 million pods.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  // Explicit pods count their repeats.
  const std::string listed = R"(name: listed
fleet:
- template: {name: l4, model: NVIDIA L4, cards: 4, card_memory_mib: 23034}
  count: 2
templates:
  small: {gpu: 1, gpumem: 3000}
pods:
- {at: 0, template: small, repeat: 7}
- {at: 5, template: small}
)";
  const sim::RunSize listed_size = sim::run_size(sim::parse_scenario(listed, "listed.yaml", "."));
  CHECK(listed_size.pods == 8);
  CHECK(listed_size.nodes == 2);
  // The estimate grows with pods and nodes and with the card-use log.
  CHECK(sim::run_memory_bytes({1000, 10}, true) > sim::run_memory_bytes({1000, 10}, false));
  CHECK(sim::run_memory_bytes({2000, 10}, false) > sim::run_memory_bytes({1000, 10}, false));
  CHECK(sim::run_memory_bytes({1000, 20}, false) > sim::run_memory_bytes({1000, 10}, false));
}
