// The parts of the memory model the shim's issue-11 tests lean on, checked
// on the fake alone: pools keep what they cache up to their release
// threshold, a released handle stays allocated while mapped, host memory is
// never charged, sizes that overflow are refused, and the pid-namespace mode.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <vector>

#include "fake_fixture.hpp"

using namespace fake_test;

TEST_CASE("a pool keeps freed memory charged up to its release threshold, and reuses it", "[fake][memory]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());
  CUmemoryPool pool = nullptr;
  REQUIRE(cuDeviceGetDefaultMemPool(&pool, 0) == CUDA_SUCCESS);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAllocAsync(&p, 64 * kMiB, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemFreeAsync(p, nullptr) == CUDA_SUCCESS);
  CHECK(cuda_used() == 0);  // threshold 0: released
  cuuint64_t keep = UINT64_MAX;
  REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == CUDA_SUCCESS);
  cuuint64_t read = 0;
  REQUIRE(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &read) == CUDA_SUCCESS);
  CHECK(read == UINT64_MAX);
  REQUIRE(cuMemAllocAsync(&p, 64 * kMiB, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemFreeAsync(p, nullptr) == CUDA_SUCCESS);
  CHECK(cuda_used() == 64 * kMiB);  // cached by the pool
  REQUIRE(cuMemAllocAsync(&p, 32 * kMiB, nullptr) == CUDA_SUCCESS);
  CHECK(cuda_used() == 64 * kMiB);  // reused
  REQUIRE(cuMemFreeAsync(p, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolTrimTo(pool, 16 * kMiB) == CUDA_SUCCESS);
  CHECK(cuda_used() == 16 * kMiB);
  keep = 0;
  REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == CUDA_SUCCESS);
  CHECK(cuda_used() == 0);
}

TEST_CASE("a handle released while mapped stays allocated until its last unmap", "[fake][memory]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t granularity = 0;
  REQUIRE(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) ==
          CUDA_SUCCESS);
  CHECK(granularity == 2 * kMiB);
  CUmemGenericAllocationHandle handle = 0;
  REQUIRE(cuMemCreate(&handle, 8 * kMiB, &prop, 0) == CUDA_SUCCESS);
  CUdeviceptr va = 0;
  REQUIRE(cuMemAddressReserve(&va, 8 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(va, 8 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  REQUIRE(cuMemSetAccess(va, 8 * kMiB, &access, 1) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
  CHECK(cuda_used() == 8 * kMiB);
  CHECK(cuMemMap(va, 8 * kMiB, 0, handle, 0) == CUDA_ERROR_INVALID_VALUE);  // released: no new mapping
  REQUIRE(cuMemUnmap(va, 8 * kMiB) == CUDA_SUCCESS);
  CHECK(cuda_used() == 0);
  REQUIRE(cuMemAddressFree(va, 8 * kMiB) == CUDA_SUCCESS);
}

TEST_CASE("page-locked host memory is usable and never charged - sizes that overflow are refused",
          "[fake][memory]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  void* host = nullptr;
  REQUIRE(cuMemAllocHost_v2(&host, kMiB) == CUDA_SUCCESS);
  static_cast<char*>(host)[kMiB - 1] = 7;
  std::vector<char> buffer(4096);
  REQUIRE(cuMemHostRegister_v2(buffer.data(), buffer.size(), 0) == CUDA_SUCCESS);
  CHECK(cuda_used() == 0);
  REQUIRE(cuMemHostUnregister(buffer.data()) == CUDA_SUCCESS);
  CHECK(cuMemHostUnregister(buffer.data()) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  REQUIRE(cuMemFreeHost(host) == CUDA_SUCCESS);

  CUdeviceptr p = 0;
  CHECK(cuMemAlloc_v2(&p, SIZE_MAX) == CUDA_ERROR_OUT_OF_MEMORY);
  size_t pitch = 0;
  CHECK(cuMemAllocPitch_v2(&p, &pitch, SIZE_MAX / 2, 4, 4) == CUDA_ERROR_OUT_OF_MEMORY);
  CUDA_ARRAY_DESCRIPTOR desc{};
  desc.Width = 1ULL << 40;
  desc.Height = 1ULL << 40;
  desc.Format = CU_AD_FORMAT_FLOAT;
  desc.NumChannels = 4;
  CUarray array = nullptr;
  CHECK(cuArrayCreate_v2(&array, &desc) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(cuda_used() == 0);
}

TEST_CASE("in the pid-namespace mode NVML reports pid + offset", "[fake][nvml]") {
  FakeEnvironment env;
  struct Offset {
    Offset() { setenv("GPUSLICE_FAKE_PID_NAMESPACE_OFFSET", "500000", 1); }
    ~Offset() { unsetenv("GPUSLICE_FAKE_PID_NAMESPACE_OFFSET"); }
  } offset;
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, 4 * kMiB) == CUDA_SUCCESS);
  nvmlDevice_t dev = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(0, &dev) == NVML_SUCCESS);
  nvmlProcessInfo_t infos[8];
  unsigned count = 8;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(dev, &count, infos) == NVML_SUCCESS);
  REQUIRE(count == 1);
  CHECK(infos[0].pid == static_cast<unsigned>(getpid()) + 500000);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
}
