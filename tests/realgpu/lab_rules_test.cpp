// The labs' pass rules against the seed documents' own figures (and the
// first H100 run's), and against outcomes a wrong slice would give.
#include "gpuslice/realgpu/lab_rules.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace gpuslice::realgpu;

namespace {

AllocationTrial once(uint64_t limit_mib, uint64_t request_mib, uint64_t context_mib) {
  AllocationTrial t;
  t.limit = limit_mib * kMiB;
  t.request = request_mib * kMiB;
  t.context = context_mib * kMiB;
  return t;
}

AllocationTrial chunks(uint64_t limit_mib, uint64_t chunk_mib, uint64_t context_mib, uint64_t granted_mib,
                       const char* oom_line) {
  AllocationTrial t = once(limit_mib, chunk_mib, context_mib);
  t.chunked = true;
  t.granted = granted_mib * kMiB;
  t.refused = true;
  t.oom = find_oom_line(oom_line);
  return t;
}

}  // namespace

TEST_CASE("the OOM line is read in HAMi-core's form and ours") {
  const auto hami = find_oom_line(
      "[HAMI-core ERROR (pid:1 thread=... allocator.c:52)]: Device 0 OOM 4399824896 / 4194304000\nHit the "
      "limit");
  REQUIRE(hami);
  CHECK(hami->device == 0);
  CHECK(hami->needed == 4399824896ULL);
  CHECK(hami->limit == 4194304000ULL);
  const auto ours = find_oom_line("x\n[gpuslice ERROR pid=7]: Device 1 OOM 8594128896 / 8388608000\n");
  REQUIRE(ours);
  CHECK(ours->device == 1);
  CHECK_FALSE(find_oom_line("Device 0 OOM"));
  CHECK_FALSE(find_oom_line("Device 0 OOM 99999999999999999999999 / 1"));  // beyond 64 bits
}

TEST_CASE("driver charge: 2 MiB pages from 2 MiB up, 512 bytes below") {
  CHECK(driver_charge(512 * kMiB) == 512 * kMiB);
  CHECK(driver_charge(3 * kMiB) == 4 * kMiB);
  CHECK(driver_charge(1000) == 1024);
  CHECK(driver_charge(0) == 0);
}

TEST_CASE("seed 000 (A40, 260 MiB context): 20000 MiB refused, 19500 MiB granted") {
  AllocationTrial big = once(20000, 20000, 260);
  big.refused = true;
  big.oom = find_oom_line("Device 0 OOM 21244149760 / 20971520000");  // the seed's line
  CHECK(judge_allocation(big).passed);

  AllocationTrial fits = once(20000, 19500, 260);
  fits.granted = 19500 * kMiB;
  CHECK(judge_allocation(fits).passed);
  CHECK_FALSE(expected_outcome(fits).refused);

  SECTION("a slice that ignored the context would grant 20000 MiB: fails") {
    AllocationTrial wrong = once(20000, 20000, 260);
    wrong.granted = 20000 * kMiB;
    CHECK_FALSE(judge_allocation(wrong).passed);
  }
  SECTION("a refusal without the application seeing an OOM fails") {
    big.refused = false;
    CHECK_FALSE(judge_allocation(big).passed);
  }
  SECTION("a refusal line whose needed is not context + asked fails") {
    big.oom = find_oom_line("Device 0 OOM 20971520000 / 20971520000");
    CHECK_FALSE(judge_allocation(big).passed);
  }
  SECTION("a refusal naming another limit fails") {
    big.oom = find_oom_line("Device 0 OOM 21244149760 / 21000000000");
    CHECK_FALSE(judge_allocation(big).passed);
  }
}

TEST_CASE("the same claim on an H100 with CUDA 13 (518 MiB context): 19500 MiB is refused, and that passes") {
  AllocationTrial t = once(20000, 19500, 518);
  CHECK(expected_outcome(t).refused);
  t.refused = true;
  t.oom = find_oom_line("Device 0 OOM 20990394368 / 20971520000");  // the first H100 run
  CHECK(judge_allocation(t).passed);
  SECTION("granting it there would overrun the slice: fails") {
    AllocationTrial wrong = once(20000, 19500, 518);
    wrong.granted = 19500 * kMiB;
    CHECK_FALSE(judge_allocation(wrong).passed);
  }
}

TEST_CASE("seed 001 (T4, 100 MiB context): 512 MiB chunks to 3584 MiB, then HAMi-core's exact line") {
  CHECK(judge_allocation(chunks(4000, 512, 100, 3584, "Device 0 OOM 4399824896 / 4194304000")).passed);
  CHECK(expected_outcome(chunks(4000, 512, 100, 0, "")).granted == 3584 * kMiB);
  // H100 (518 MiB): 3072 MiB, "Device 0 OOM 4301258752 / 4194304000" (the first H100 run).
  CHECK(judge_allocation(chunks(4000, 512, 518, 3072, "Device 0 OOM 4301258752 / 4194304000")).passed);
  // One chunk too many or too few is a wrong slice.
  CHECK_FALSE(judge_allocation(chunks(4000, 512, 100, 3072, "Device 0 OOM 3863..")).passed);
  CHECK_FALSE(judge_allocation(chunks(4000, 512, 518, 3584, "Device 0 OOM 4838129664 / 4194304000")).passed);
  // Granted right but never refused (a loop that stopped by itself) fails.
  AllocationTrial quiet = chunks(4000, 512, 100, 3584, "");
  quiet.refused = false;
  CHECK_FALSE(judge_allocation(quiet).passed);
}

TEST_CASE("seed 002 (A6000, 4 MiB context): refused after 7680 MiB with its line") {
  CHECK(judge_allocation(chunks(8000, 512, 4, 7680, "Device 0 OOM 8594128896 / 8388608000")).passed);
  // Our fake driver without a context (0 MiB): 8589934592, also exact for it.
  CHECK(judge_allocation(chunks(8000, 512, 0, 7680, "Device 0 OOM 8589934592 / 8388608000")).passed);
  // A needed figure one page off is within the slack, three pages off is not.
  CHECK(judge_allocation(chunks(8000, 512, 4, 7680, "Device 0 OOM 8596226048 / 8388608000")).passed);
  CHECK_FALSE(judge_allocation(chunks(8000, 512, 4, 7680, "Device 0 OOM 8600420352 / 8388608000")).passed);
}

TEST_CASE("compute share: within the tolerance of the cap") {
  CHECK(judge_share(27.6, 30, 5).passed);  // seed 001's DCGM average
  CHECK(judge_share(34.9, 30, 5).passed);
  CHECK_FALSE(judge_share(25.1, 30, 3).passed);
  CHECK_FALSE(judge_share(47.5, 60, 5).passed);  // the first H100 run's force 60
  CHECK_FALSE(judge_share(std::nan(""), 30, 5).passed);
}
