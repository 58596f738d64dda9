// Memory accounting: every allocation path charges the card by its size
// as the real driver rounds it, frees give it back, and nothing passes the
// card's capacity.
#include <catch2/catch.hpp>

#include "fake_fixture.hpp"

using namespace fake_test;

namespace {
// The real driver's rounding, as the fake documents it: whole 2 MiB pages
// from 2 MiB up, 512-byte steps below.
std::uint64_t taken(std::uint64_t bytes) {
  const std::uint64_t unit = bytes >= 2 * kMiB ? 2 * kMiB : 512;
  return (bytes + unit - 1) / unit * unit;
}
}  // namespace

TEST_CASE("allocations up to the card size succeed, one byte more is out of memory", "[fake][memory]") {
  FakeEnvironment env({.gpus = "Tiny:1024:8"});
  REQUIRE(init_with_context() != nullptr);
  size_t free = 0;
  size_t total = 0;
  REQUIRE(cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS);
  CHECK(total == kGiB);
  CHECK(free == kGiB);

  CUdeviceptr half = 0;
  CUdeviceptr other_half = 0;
  CUdeviceptr extra = 0;
  REQUIRE(cuMemAlloc_v2(&half, kGiB / 2) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc_v2(&other_half, kGiB / 2) == CUDA_SUCCESS);
  CHECK(half != other_half);
  CHECK(half != 0);
  REQUIRE(cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS);
  CHECK(free == 0);
  CHECK(cuMemAlloc_v2(&extra, 1) == CUDA_ERROR_OUT_OF_MEMORY);

  REQUIRE(cuMemFree_v2(half) == CUDA_SUCCESS);
  CHECK(cuMemFree_v2(half) == CUDA_ERROR_INVALID_VALUE);  // twice
  CHECK(cuda_used() == kGiB / 2);
  CHECK(cuMemAlloc_v2(&extra, kGiB / 2 + 1) == CUDA_ERROR_OUT_OF_MEMORY);
  REQUIRE(cuMemAlloc_v2(&extra, kGiB / 2) == CUDA_SUCCESS);
  REQUIRE(cuMemFree_v2(extra) == CUDA_SUCCESS);
  REQUIRE(cuMemFree_v2(other_half) == CUDA_SUCCESS);
  CHECK(cuda_used() == 0);
  CHECK(cuMemAlloc_v2(&extra, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemFree_v2(0x1234) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("every allocation path changes used memory by its size", "[fake][memory]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());
  const std::uint64_t base = cuda_used();
  REQUIRE(base == 0);
  auto expect_used = [&](std::uint64_t bytes) {
    CHECK(cuda_used() == bytes);
    CHECK(nvml_used(0) == bytes);
  };

  SECTION("cuMemAlloc_v2") {
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc_v2(&p, 12345) == CUDA_SUCCESS);
    expect_used(taken(12345));  // 12800: 25 steps of 512 bytes
    REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  }
  SECTION("cuMemAllocPitch_v2 pads rows to 512 bytes") {
    CUdeviceptr p = 0;
    size_t pitch = 0;
    REQUIRE(cuMemAllocPitch_v2(&p, &pitch, 1000, 3, 4) == CUDA_SUCCESS);
    CHECK(pitch == 1024);
    expect_used(3 * 1024);
    CHECK(cuMemAllocPitch_v2(&p, &pitch, 1000, 3, 3) == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  }
  SECTION("cuMemAllocManaged") {
    CUdeviceptr p = 0;
    REQUIRE(cuMemAllocManaged(&p, 3 * kMiB, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    expect_used(taken(3 * kMiB));  // two 2 MiB pages
    REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  }
  SECTION("cuMemAllocAsync and its _ptsz form, freed with cuMemFreeAsync") {
    CUstream stream = nullptr;
    REQUIRE(cuStreamCreate(&stream, 0) == CUDA_SUCCESS);
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    REQUIRE(cuMemAllocAsync(&a, 5 * kMiB, stream) == CUDA_SUCCESS);
    REQUIRE(cuMemAllocAsync_ptsz(&b, 7 * kMiB, nullptr) == CUDA_SUCCESS);
    expect_used(taken(5 * kMiB) + taken(7 * kMiB));  // 6 + 8 MiB
    REQUIRE(cuMemFreeAsync(a, stream) == CUDA_SUCCESS);
    REQUIRE(cuMemFreeAsync_ptsz(b, nullptr) == CUDA_SUCCESS);
    CHECK(cuMemAllocAsync(&a, 1, reinterpret_cast<CUstream>(&a)) == CUDA_ERROR_INVALID_HANDLE);
    REQUIRE(cuStreamDestroy_v2(stream) == CUDA_SUCCESS);
  }
  SECTION("cuMemAllocFromPoolAsync from the default pool and a created one") {
    CUmemoryPool default_pool = nullptr;
    REQUIRE(cuDeviceGetDefaultMemPool(&default_pool, 0) == CUDA_SUCCESS);
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUmemoryPool pool = nullptr;
    REQUIRE(cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&a, 2 * kMiB, default_pool, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuMemAllocFromPoolAsync_ptsz(&b, 6 * kMiB, pool, nullptr) == CUDA_SUCCESS);
    expect_used(8 * kMiB);
    REQUIRE(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuMemFree_v2(b) == CUDA_SUCCESS);
    CHECK(cuMemPoolDestroy(default_pool) == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  }
  SECTION("cuMemCreate / cuMemRelease") {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, 64 * kMiB, &prop, 0) == CUDA_SUCCESS);
    expect_used(64 * kMiB);
    REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
    CHECK(cuMemRelease(handle) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemCreate(&handle, kMiB, &prop, 0) == CUDA_ERROR_INVALID_VALUE);  // not whole pages
    prop.location.id = 1;
    CHECK(cuMemCreate(&handle, 2 * kMiB, &prop, 0) == CUDA_ERROR_INVALID_DEVICE);
  }
  SECTION("cuArrayCreate_v2 and cuArray3DCreate_v2") {
    CUDA_ARRAY_DESCRIPTOR desc{};
    desc.Width = 100;
    desc.Height = 50;
    desc.Format = CU_AD_FORMAT_FLOAT;
    desc.NumChannels = 4;
    CUarray flat = nullptr;
    REQUIRE(cuArrayCreate_v2(&flat, &desc) == CUDA_SUCCESS);
    expect_used(taken(100 * 50 * 4 * 4));
    CUDA_ARRAY3D_DESCRIPTOR desc3{};
    desc3.Width = 10;
    desc3.Height = 10;
    desc3.Depth = 10;
    desc3.Format = CU_AD_FORMAT_UNSIGNED_INT16;
    desc3.NumChannels = 2;
    CUarray cube = nullptr;
    REQUIRE(cuArray3DCreate_v2(&cube, &desc3) == CUDA_SUCCESS);
    expect_used(taken(100 * 50 * 4 * 4) + taken(1000 * 2 * 2));
    desc3.Height = 0;  // a 1D array: height and depth count as 1
    desc3.Depth = 0;
    CUarray line = nullptr;
    REQUIRE(cuArray3DCreate_v2(&line, &desc3) == CUDA_SUCCESS);
    expect_used(taken(100 * 50 * 4 * 4) + taken(1000 * 2 * 2) + taken(10 * 2 * 2));
    REQUIRE(cuArrayDestroy(flat) == CUDA_SUCCESS);
    REQUIRE(cuArrayDestroy(cube) == CUDA_SUCCESS);
    REQUIRE(cuArrayDestroy(line) == CUDA_SUCCESS);
    CHECK(cuArrayDestroy(line) == CUDA_ERROR_INVALID_HANDLE);
  }
  expect_used(0);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("copies and memsets only accept ranges inside live allocations", "[fake][memory]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, 4096) == CUDA_SUCCESS);
  char host[4096] = {};
  CHECK(cuMemcpyHtoD_v2(p, host, sizeof host) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoD_v2(p + 96, host, 4000) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoD_v2(p + 97, host, 4000) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemcpyDtoH_v2(host, p + 4095, 1) == CUDA_SUCCESS);
  CHECK(cuMemcpyDtoH_v2(host, p + 4096, 1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemcpyDtoH_v2(host, p - 1, 1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemsetD8_v2(p, 0, 4096) == CUDA_SUCCESS);
  CHECK(cuMemsetD8_v2_ptds(p, 0, 4097) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemcpyHtoD_v2_ptds(p, host, 16) == CUDA_SUCCESS);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoD_v2(p, host, 1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemsetD8_v2(0, 0, 1) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("allocating needs a current context", "[fake][memory]") {
  FakeEnvironment env;
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUdeviceptr p = 0;
  CHECK(cuMemAlloc_v2(&p, 1) == CUDA_ERROR_INVALID_CONTEXT);
  size_t free = 0;
  size_t total = 0;
  CHECK(cuMemGetInfo_v2(&free, &total) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("a context footprint is charged once per device and process", "[fake][memory][context]") {
  FakeEnvironment env({.gpus = "A:4096:10;B:4096:10", .context_mib = "300"});
  REQUIRE(nvml_ready());
  CUcontext primary = init_with_context(0);
  REQUIRE(primary != nullptr);
  CHECK(cuda_used() == 300 * kMiB);
  CHECK(nvml_used(0) == 300 * kMiB);
  CHECK(nvml_used(1) == 0);

  // A second context on the same device shares the process's footprint.
  CUcontext created = nullptr;
  REQUIRE(cuCtxCreate_v2(&created, 0, 0) == CUDA_SUCCESS);
  CUcontext current = nullptr;
  REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  CHECK(current == created);  // a created context is pushed
  CHECK(nvml_used(0) == 300 * kMiB);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, 100 * kMiB) == CUDA_SUCCESS);
  CHECK(nvml_used(0) == 400 * kMiB);
  // Destroying a context frees what it allocated.
  REQUIRE(cuCtxDestroy_v2(created) == CUDA_SUCCESS);
  CHECK(nvml_used(0) == 300 * kMiB);
  REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  CHECK(current == primary);
  CHECK(cuCtxDestroy_v2(primary) == CUDA_ERROR_INVALID_CONTEXT);  // primaries are released, not destroyed

  // A context on the other card charges that card.
  CUcontext on_b = nullptr;
  REQUIRE(cuCtxCreate_v4(&on_b, nullptr, 0, 1) == CUDA_SUCCESS);
  CUdevice device = -1;
  REQUIRE(cuCtxGetDevice(&device) == CUDA_SUCCESS);
  CHECK(device == 1);
  CHECK(nvml_used(1) == 300 * kMiB);
  CUcontext popped = nullptr;
  REQUIRE(cuCtxPopCurrent_v2(&popped) == CUDA_SUCCESS);
  CHECK(popped == on_b);
  REQUIRE(cuCtxDestroy_v2(on_b) == CUDA_SUCCESS);
  CHECK(nvml_used(1) == 0);

  // Retains are counted; the last release frees the footprint and the
  // context's memory.
  CUcontext again = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&again, 0) == CUDA_SUCCESS);
  CHECK(again == primary);
  REQUIRE(cuMemAlloc_v2(&p, 50 * kMiB) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxRelease_v2(0) == CUDA_SUCCESS);
  CHECK(nvml_used(0) == 350 * kMiB);
  REQUIRE(cuDevicePrimaryCtxRelease_v2(0) == CUDA_SUCCESS);
  CHECK(nvml_used(0) == 0);
  CHECK(cuDevicePrimaryCtxRelease_v2(0) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuMemAlloc_v2(&p, 1) == CUDA_ERROR_INVALID_CONTEXT);  // still current, but released
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("a context that does not fit is refused", "[fake][memory][context]") {
  FakeEnvironment env({.gpus = "Tiny:256:8", .context_mib = "300"});
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext context = nullptr;
  CHECK(cuDevicePrimaryCtxRetain(&context, 0) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(cuCtxCreate_v2(&context, 0, 0) == CUDA_ERROR_OUT_OF_MEMORY);
}

TEST_CASE("the context stack follows push, pop and set", "[fake][context]") {
  FakeEnvironment env({.gpus = "A:1024:1;B:1024:1"});
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext a = nullptr;
  CUcontext b = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&a, 0) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxRetain(&b, 1) == CUDA_SUCCESS);
  CUcontext current = reinterpret_cast<CUcontext>(&current);
  REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  CHECK(current == nullptr);
  CUdevice device = -1;
  CHECK(cuCtxGetDevice(&device) == CUDA_ERROR_INVALID_CONTEXT);
  REQUIRE(cuCtxPushCurrent_v2(a) == CUDA_SUCCESS);
  REQUIRE(cuCtxPushCurrent_v2(b) == CUDA_SUCCESS);
  REQUIRE(cuCtxGetDevice(&device) == CUDA_SUCCESS);
  CHECK(device == 1);
  REQUIRE(cuCtxSetCurrent(a) == CUDA_SUCCESS);  // replaces the top
  REQUIRE(cuCtxGetDevice(&device) == CUDA_SUCCESS);
  CHECK(device == 0);
  REQUIRE(cuCtxPopCurrent_v2(&current) == CUDA_SUCCESS);
  CHECK(current == a);
  REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  CHECK(current == a);  // the one pushed first
  REQUIRE(cuCtxSetCurrent(nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  CHECK(current == nullptr);
  CHECK(cuCtxPopCurrent_v2(&current) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxSetCurrent(reinterpret_cast<CUcontext>(&device)) == CUDA_ERROR_INVALID_CONTEXT);
}
