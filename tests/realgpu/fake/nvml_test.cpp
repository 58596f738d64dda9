// NVML's view: init counting, card-wide memory (v1 and v2), the running
// process list and its size protocol.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "fake_fixture.hpp"

using namespace fake_test;

TEST_CASE("NVML needs nvmlInit and counts init/shutdown pairs", "[fake][nvml]") {
  FakeEnvironment env;
  REQUIRE(nvmlInit_v2() == NVML_SUCCESS);
  REQUIRE(nvmlInit() == NVML_SUCCESS);
  unsigned count = 0;
  REQUIRE(nvmlShutdown() == NVML_SUCCESS);
  CHECK(nvmlDeviceGetCount(&count) == NVML_SUCCESS);  // still one init left
  REQUIRE(nvmlShutdown() == NVML_SUCCESS);
  CHECK(nvmlDeviceGetCount(&count) == NVML_ERROR_UNINITIALIZED);
  CHECK(nvmlShutdown() == NVML_ERROR_UNINITIALIZED);
  CHECK(std::string(nvmlErrorString(NVML_ERROR_INSUFFICIENT_SIZE)) == "Insufficient Size");
  CHECK(std::string(nvmlErrorString(12345)) == "Unknown Error");
}

TEST_CASE("NVML memory info is card-wide and checks the v2 version", "[fake][nvml]") {
  FakeEnvironment env({.gpus = "Card:8192:16", .context_mib = "500"});
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, kGiB) == CUDA_SUCCESS);
  nvmlDevice_t device = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex(0, &device) == NVML_SUCCESS);
  nvmlMemory_t v1{};
  REQUIRE(nvmlDeviceGetMemoryInfo(device, &v1) == NVML_SUCCESS);
  CHECK(v1.total == 8192 * kMiB);
  CHECK(v1.used == kGiB + 500 * kMiB);
  CHECK(v1.free == v1.total - v1.used);
  nvmlMemory_v2_t v2{};
  CHECK(nvmlDeviceGetMemoryInfo_v2(device, &v2) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  v2.version = nvmlMemory_v2;
  REQUIRE(nvmlDeviceGetMemoryInfo_v2(device, &v2) == NVML_SUCCESS);
  CHECK(v2.total == v1.total);
  CHECK(v2.used == v1.used);
  CHECK(v2.free == v1.free);
  CHECK(v2.reserved == 0);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("NVML lists live processes holding memory or a context", "[fake][nvml]") {
  FakeEnvironment env({.gpus = "A:8192:16;B:8192:16", .context_mib = "200"});
  REQUIRE(nvml_ready());
  nvmlDevice_t device = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(0, &device) == NVML_SUCCESS);
  unsigned count = 5;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, nullptr) == NVML_SUCCESS);
  CHECK(count == 0);

  REQUIRE(init_with_context() != nullptr);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, kGiB) == CUDA_SUCCESS);
  Signal holding;
  Signal done;
  const pid_t child = spawn([&] {
    if (init_with_context() == nullptr) return 1;
    CUdeviceptr q = 0;
    if (cuMemAlloc_v2(&q, 2 * kGiB) != CUDA_SUCCESS) return 2;
    holding.notify();
    return done.wait() ? 0 : 3;
  });
  REQUIRE(holding.wait());

  count = 1;
  nvmlProcessInfo_t infos[4] = {};
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos) == NVML_ERROR_INSUFFICIENT_SIZE);
  REQUIRE(count == 2);
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos) == NVML_SUCCESS);
  REQUIRE(count == 2);
  for (unsigned i = 0; i < count; ++i) {
    if (infos[i].pid == static_cast<unsigned>(::getpid())) {
      CHECK(infos[i].usedGpuMemory == kGiB + 200 * kMiB);
    } else {
      CHECK(infos[i].pid == static_cast<unsigned>(child));
      CHECK(infos[i].usedGpuMemory == 2 * kGiB + 200 * kMiB);
    }
    CHECK(infos[i].gpuInstanceId == 0xFFFFFFFFu);
  }
  nvmlDevice_t other = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(1, &other) == NVML_SUCCESS);
  count = 4;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(other, &count, infos) == NVML_SUCCESS);
  CHECK(count == 0);

  // A process that exits normally is gone from the list too.
  done.notify();
  REQUIRE(wait_child(child) == 0);
  count = 4;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos) == NVML_SUCCESS);
  REQUIRE(count == 1);
  CHECK(infos[0].pid == static_cast<unsigned>(::getpid()));

  // With a context but no memory (and no footprint) a process still shows.
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos) == NVML_SUCCESS);
  CHECK(count == 1);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}
