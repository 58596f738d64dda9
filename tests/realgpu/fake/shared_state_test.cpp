// The state module on its own: fleet parsing, the state file, the ledger's
// reclaiming of dead (or reused) pids, and the timeline's arithmetic.
#include "shared_state.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "device_table.hpp"
#include "fake_fixture.hpp"
#include "gpuslice/realgpu/process_identity.hpp"
#include "ledger.hpp"
#include "timeline.hpp"
#include "visible_devices.hpp"

namespace fake = gpuslice::fake;
namespace realgpu = gpuslice::realgpu;
using fake_test::FakeEnvironment;

namespace {

std::unique_ptr<fake::SharedState> attach(const FakeEnvironment& env, const std::string& fleet) {
  const fake::FleetParse parsed = fake::parse_fleet(fleet);
  REQUIRE(parsed.ok());
  std::string error;
  auto state = fake::SharedState::attach(env.dir(), fleet, parsed.devices, error);
  INFO(error);
  REQUIRE(state != nullptr);
  return state;
}

}  // namespace

TEST_CASE("fleet parsing", "[fake][state]") {
  const fake::FleetParse parsed = fake::parse_fleet(fake::kDefaultFleet);
  REQUIRE(parsed.ok());
  REQUIRE(parsed.devices.size() == 1);
  CHECK(parsed.devices[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(parsed.devices[0].memory_mib == 81559);
  CHECK(parsed.devices[0].sm_count == 132);
  CHECK(fake::parse_fleet("a:1:1;b:2:2;c:3:3").devices.size() == 3);
  std::string seventeen;
  for (int i = 0; i < 17; ++i) {
    if (i > 0) seventeen += ';';
    seventeen += "g:1:1";
  }
  CHECK_FALSE(fake::parse_fleet(seventeen).ok());
  CHECK_FALSE(fake::parse_fleet(std::string(64, 'n') + ":1:1").ok());
  CHECK(fake::parse_fleet(std::string(63, 'n') + ":1:1").ok());
  CHECK_FALSE(fake::parse_fleet("a:99999999999999999999:1").ok());
}

TEST_CASE("the state file is named after the fleet text", "[fake][state]") {
  FakeEnvironment env;
  const std::string a = fake::state_file_path(env.dir(), "A:1:1");
  CHECK(a.rfind(env.dir() + "/gpuslice-fake-", 0) == 0);
  CHECK(a.size() == env.dir().size() + std::strlen("/gpuslice-fake-") + 16 + std::strlen(".state"));
  CHECK(a != fake::state_file_path(env.dir(), "A:1:2"));
  auto state = attach(env, "A:1:1");
  CHECK(state->path() == a);
  CHECK(::access(a.c_str(), R_OK | W_OK) == 0);
  fake::SharedState::Guard guard = state->lock();
  REQUIRE(guard);
  CHECK(guard->device_count == 1);
  CHECK(guard->devices[0].total_bytes == fake_test::kMiB);
}

TEST_CASE("the ledger drops records whose pid is dead or reused", "[fake][state]") {
  FakeEnvironment env;
  auto state = attach(env, "A:1024:1");
  fake::SharedState::Guard guard = state->lock();
  REQUIRE(guard);
  const realgpu::ProcessId self = realgpu::self_process();
  REQUIRE(self.start_time != 0);
  REQUIRE(fake::ledger::charge(*guard, self, 0, 100, fake::ledger::Kind::allocation) ==
          fake::ledger::Charge::ok);
  // Our pid with another start time: a previous process that had our pid.
  const realgpu::ProcessId reused{self.pid, self.start_time + 1};
  REQUIRE(fake::ledger::charge(*guard, reused, 0, 200, fake::ledger::Kind::allocation) ==
          fake::ledger::Charge::ok);
  // A pid that cannot exist.
  const realgpu::ProcessId gone{0x3fffffff, 1};
  REQUIRE(fake::ledger::charge(*guard, gone, 0, 400, fake::ledger::Kind::context) ==
          fake::ledger::Charge::ok);
  CHECK(fake::ledger::used_bytes(*guard, 0) == 700);
  fake::ledger::reap_dead(*guard);
  CHECK(fake::ledger::used_bytes(*guard, 0) == 100);
  // Charging past the card reaps first, then refuses.
  REQUIRE(fake::ledger::charge(*guard, gone, 0, 500, fake::ledger::Kind::allocation) ==
          fake::ledger::Charge::ok);
  CHECK(fake::ledger::charge(*guard, self, 0, 1024 * fake_test::kMiB - 100, fake::ledger::Kind::allocation) ==
        fake::ledger::Charge::ok);
  CHECK(fake::ledger::charge(*guard, self, 0, 1, fake::ledger::Kind::allocation) ==
        fake::ledger::Charge::out_of_memory);
}

TEST_CASE("the timeline serialises and clips busy time to the window and now", "[fake][state]") {
  FakeEnvironment env;
  auto state = attach(env, "A:1024:1");
  fake::SharedState::Guard guard = state->lock();
  REQUIRE(guard);
  const std::int64_t t0 = 1'000'000'000;
  const std::int64_t ten = 10'000'000;
  const std::int64_t first[] = {ten, ten};
  CHECK(fake::timeline::enqueue(*guard, 0, 100, first, t0) == t0 + 2 * ten);
  // Launched while the device is busy: queued behind.
  const std::int64_t second[] = {ten};
  CHECK(fake::timeline::enqueue(*guard, 0, 200, second, t0 + 5'000'000) == t0 + 3 * ten);
  // Launched after an idle gap: starts at once.
  CHECK(fake::timeline::enqueue(*guard, 0, 100, second, t0 + 5 * ten) == t0 + 6 * ten);

  CHECK(fake::timeline::busy_ns(*guard, 0, t0, t0 + 6 * ten) == 4 * ten);
  CHECK(fake::timeline::busy_ns(*guard, 0, t0 + 15'000'000, t0 + 25'000'000) == ten);
  // Only what has run by "now" counts.
  CHECK(fake::timeline::busy_ns(*guard, 0, t0, t0 + 25'000'000) == 25'000'000);
  const auto by_pid = fake::timeline::busy_by_process(*guard, 0, t0, t0 + 6 * ten);
  REQUIRE(by_pid.size() == 2);
  for (const auto& p : by_pid) CHECK(p.busy_ns == (p.pid == 100 ? 3 * ten : ten));

  // More intervals than the ring holds: only the newest are remembered.
  std::vector<std::int64_t> many(fake::kRingSize + 10, 1000);
  const std::int64_t end = fake::timeline::enqueue(*guard, 0, 300, many, t0 + 7 * ten);
  CHECK(fake::timeline::busy_ns(*guard, 0, t0, end) == static_cast<std::int64_t>(fake::kRingSize) * 1000);
}

TEST_CASE("visible devices parse like the real driver", "[fake][state]") {
  const auto fleet = fake::parse_fleet("a:1:1;b:1:1;c:1:1").devices;
  using V = std::vector<std::size_t>;
  CHECK(fake::visible_devices(std::nullopt, fleet) == V{0, 1, 2});
  CHECK(fake::visible_devices("2,0", fleet) == V{2, 0});
  CHECK(fake::visible_devices(" 1 , 2", fleet) == V{1, 2});
  CHECK(fake::visible_devices("1,1,2", fleet) == V{1});
  CHECK(fake::visible_devices("1,x,2", fleet) == V{1});
  CHECK(fake::visible_devices("3", fleet) == V{});
  CHECK(fake::visible_devices("", fleet) == V{});
  const std::string uuid = gpuslice::realgpu::uuid_text(fake::device_uuid(2, "c"));
  CHECK(fake::visible_devices(uuid.substr(0, 12), fleet) == V{2});
  CHECK(fake::visible_devices("GPU-", fleet) == V{});  // ambiguous prefix
}
