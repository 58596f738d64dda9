// Processes killed at any instant: their memory and contexts come back, and
// a kill while holding the state lock leaves the state usable at once.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "device_table.hpp"
#include "fake_fixture.hpp"
#include "shared_state.hpp"

using namespace fake_test;

namespace {

bool listed(unsigned index, pid_t pid, std::uint64_t* bytes = nullptr) {
  nvmlDevice_t device = nullptr;
  if (nvmlDeviceGetHandleByIndex_v2(index, &device) != NVML_SUCCESS) return false;
  nvmlProcessInfo_t infos[16] = {};
  unsigned count = 16;
  if (nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos) != NVML_SUCCESS) return false;
  for (unsigned i = 0; i < count; ++i) {
    if (infos[i].pid != static_cast<unsigned>(pid)) continue;
    if (bytes != nullptr) *bytes = infos[i].usedGpuMemory;
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a SIGKILLed process's memory and context return to the card", "[fake][crash]") {
  FakeEnvironment env({.gpus = "Small:4096:16", .context_mib = "100"});
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());
  CHECK(cuda_used() == 100 * kMiB);

  Signal allocated;
  const pid_t child = spawn([&] {
    if (init_with_context() == nullptr) return 1;
    CUdeviceptr p = 0;
    if (cuMemAlloc_v2(&p, 3 * kGiB) != CUDA_SUCCESS) return 2;
    allocated.notify();
    ::pause();
    return 0;
  });
  REQUIRE(allocated.wait());
  CHECK(cuda_used() == 100 * kMiB + 100 * kMiB + 3 * kGiB);
  std::uint64_t child_bytes = 0;
  CHECK(listed(0, child, &child_bytes));
  CHECK(child_bytes == 3 * kGiB + 100 * kMiB);
  // The card is nearly full: the parent cannot take 1 GiB.
  CUdeviceptr p = 0;
  CHECK(cuMemAlloc_v2(&p, kGiB) == CUDA_ERROR_OUT_OF_MEMORY);

  REQUIRE(::kill(child, SIGKILL) == 0);
  REQUIRE(wait_child(child) == 128 + SIGKILL);
  CHECK(cuda_used() == 100 * kMiB);
  CHECK_FALSE(listed(0, child));
  CHECK(listed(0, ::getpid()));
  REQUIRE(cuMemAlloc_v2(&p, kGiB) == CUDA_SUCCESS);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("an allocation that would fail first reclaims dead processes", "[fake][crash]") {
  FakeEnvironment env({.gpus = "Small:2048:16"});
  REQUIRE(init_with_context() != nullptr);
  Signal allocated;
  const pid_t child = spawn([&] {
    if (init_with_context() == nullptr) return 1;
    CUdeviceptr p = 0;
    if (cuMemAlloc_v2(&p, 2 * kGiB) != CUDA_SUCCESS) return 2;
    allocated.notify();
    ::pause();
    return 0;
  });
  REQUIRE(allocated.wait());
  REQUIRE(::kill(child, SIGKILL) == 0);
  REQUIRE(wait_child(child) == 128 + SIGKILL);
  // No query in between: the allocation itself finds the dead holder.
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, 2 * kGiB) == CUDA_SUCCESS);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
}

TEST_CASE("a process killed while holding the state lock leaves it usable", "[fake][crash]") {
  const std::string fleet = "Small:4096:16";
  FakeEnvironment env({.gpus = fleet});
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());

  Signal locked;
  const pid_t child = spawn([&] {
    if (init_with_context() == nullptr) return 1;
    CUdeviceptr p = 0;
    if (cuMemAlloc_v2(&p, kGiB) != CUDA_SUCCESS) return 2;
    // Take the library's lock the way the library does (same file, same
    // mutex) and die holding it, mid-"update".
    const gpuslice::fake::FleetParse parsed = gpuslice::fake::parse_fleet(fleet);
    std::string error;
    auto state = gpuslice::fake::SharedState::attach(env.dir(), fleet, parsed.devices, error);
    if (!state) return 3;
    gpuslice::fake::SharedState::Guard guard = state->lock();
    if (!guard) return 4;
    locked.notify();
    ::pause();
    return 0;
  });
  REQUIRE(locked.wait());
  REQUIRE(::kill(child, SIGKILL) == 0);
  REQUIRE(wait_child(child) == 128 + SIGKILL);

  const std::int64_t start = now_ns();
  CHECK(cuda_used() == 0);  // the child's 1 GiB is back
  CHECK(nvml_used(0) == 0);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, 4 * kGiB) == CUDA_SUCCESS);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  CHECK(now_ns() - start < 1'000'000'000);  // no waiting on the dead holder
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("a forked child starts without the parent's GPU objects", "[fake][crash]") {
  FakeEnvironment env({.gpus = "Small:4096:16"});
  CUcontext parent_context = init_with_context();
  REQUIRE(parent_context != nullptr);
  CUdeviceptr parent_pointer = 0;
  REQUIRE(cuMemAlloc_v2(&parent_pointer, kMiB) == CUDA_SUCCESS);
  const pid_t child = spawn([&] {
    // The parent's context and memory are not the child's.
    CUdeviceptr p = 0;
    if (cuMemAlloc_v2(&p, 1) != CUDA_ERROR_INVALID_CONTEXT) return 1;
    if (cuCtxSetCurrent(parent_context) != CUDA_ERROR_INVALID_CONTEXT) return 2;
    if (init_with_context() == nullptr) return 3;
    if (cuMemFree_v2(parent_pointer) != CUDA_ERROR_INVALID_VALUE) return 4;
    if (cuda_used() != kMiB) return 5;  // the card still holds the parent's
    return 0;
  });
  CHECK(wait_child(child) == 0);
  CHECK(cuda_used() == kMiB);
  REQUIRE(cuMemFree_v2(parent_pointer) == CUDA_SUCCESS);
}
