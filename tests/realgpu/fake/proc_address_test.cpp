// cuGetProcAddress picks the variant the real driver would, from the one
// export list; everything listed is exported; error strings.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <string>

#include "cuda_exports.hpp"
#include "fake_fixture.hpp"

namespace {

void* exported(const char* name) {
  static void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  return ::dlsym(library, name);
}

void* lookup(const char* symbol, int version, cuuint64_t flags) {
  void* function = nullptr;
  CUdriverProcAddressQueryResult status{};
  return cuGetProcAddress_v2(symbol, &function, version, flags, &status) == CUDA_SUCCESS ? function : nullptr;
}

}  // namespace

TEST_CASE("cuGetProcAddress picks the newest variant for the version", "[fake][proc]") {
  CHECK(lookup("cuMemAlloc", 13000, 0) == exported("cuMemAlloc_v2"));
  CHECK(lookup("cuCtxCreate", 13000, 0) == exported("cuCtxCreate_v4"));
  CHECK(lookup("cuCtxCreate", 12050, 0) == exported("cuCtxCreate_v4"));
  CHECK(lookup("cuCtxCreate", 12040, 0) == exported("cuCtxCreate_v2"));
  CHECK(lookup("cuDeviceGetUuid", 12000, 0) == exported("cuDeviceGetUuid_v2"));
  CHECK(lookup("cuDeviceGetUuid", 11000, 0) == exported("cuDeviceGetUuid"));
  CHECK(lookup("cuGetProcAddress", 12000, 0) == exported("cuGetProcAddress_v2"));
  CHECK(lookup("cuGraphInstantiate", 12000, 0) == exported("cuGraphInstantiateWithFlags"));
  CHECK(lookup("cuInit", 2000, 0) == exported("cuInit"));
}

TEST_CASE("cuGetProcAddress honours the per-thread default stream flag", "[fake][proc]") {
  const cuuint64_t ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  const cuuint64_t legacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  CHECK(lookup("cuLaunchKernel", 13000, ptds) == exported("cuLaunchKernel_ptsz"));
  CHECK(lookup("cuLaunchKernel", 13000, legacy) == exported("cuLaunchKernel"));
  CHECK(lookup("cuLaunchKernel", 13000, 0) == exported("cuLaunchKernel"));
  CHECK(lookup("cuMemcpyHtoD", 13000, ptds) == exported("cuMemcpyHtoD_v2_ptds"));
  CHECK(lookup("cuMemAllocAsync", 13000, ptds) == exported("cuMemAllocAsync_ptsz"));
  CHECK(lookup("cuGraphLaunch", 13000, ptds) == exported("cuGraphLaunch_ptsz"));
  // No per-thread variant: the one there is.
  CHECK(lookup("cuMemAlloc", 13000, ptds) == exported("cuMemAlloc_v2"));
}

TEST_CASE("cuGetProcAddress reports unknown symbols and too-old versions", "[fake][proc]") {
  CUdriverProcAddressQueryResult status{};
  void* function = &status;
  CHECK(cuGetProcAddress_v2("cuNoSuchFunction", &function, 13000, 0, &status) == CUDA_ERROR_NOT_FOUND);
  CHECK(function == nullptr);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  // Base names only, as with the real driver.
  CHECK(cuGetProcAddress_v2("cuMemAlloc_v2", &function, 13000, 0, &status) == CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(cuGetProcAddress_v2("cuLibraryLoadData", &function, 11080, 0, &status) == CUDA_ERROR_NOT_FOUND);
  CHECK(function == nullptr);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(cuGetProcAddress_v2("cuInit", &function, 13000, 4, &status) == CUDA_ERROR_INVALID_VALUE);
  // The legacy four-argument form.
  CHECK(cuGetProcAddress("cuMemFree", &function, 13000, 0) == CUDA_SUCCESS);
  CHECK(function == exported("cuMemFree_v2"));
  CHECK(cuGetProcAddress("nope", &function, 13000, 0) == CUDA_ERROR_NOT_FOUND);
  CHECK(function == nullptr);
}

TEST_CASE("every listed function is exported and found by its base name", "[fake][proc]") {
  int checked = 0;
#define CHECK_EXPORT(fn, base, since, stream)                                                     \
  {                                                                                               \
    INFO(#fn);                                                                                    \
    CHECK(exported(#fn) != nullptr);                                                              \
    const cuuint64_t flags =                                                                      \
        std::string(#stream) == "per_thread" ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0; \
    CHECK(lookup(#base, 13000, flags) != nullptr);                                                \
    CHECK(lookup(#base, since, flags) != nullptr);                                                \
    ++checked;                                                                                    \
  }
  GPUSLICE_FAKE_CUDA_EXPORTS(CHECK_EXPORT)
#undef CHECK_EXPORT
  CHECK(checked > 70);
  // The 32-bit-era entry points are exported under the plain names, as the
  // real driver does, and picked only for versions before their _v2.
  CHECK(exported("cuMemAlloc") != nullptr);
  CHECK(lookup("cuMemAlloc", 2000, 0) == exported("cuMemAlloc"));
  CHECK(lookup("cuMemAlloc", 13000, 0) == exported("cuMemAlloc_v2"));
}

TEST_CASE("error names and strings", "[fake][proc]") {
  const char* text = nullptr;
  REQUIRE(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &text) == CUDA_SUCCESS);
  CHECK(std::string(text) == "CUDA_ERROR_OUT_OF_MEMORY");
  REQUIRE(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text) == CUDA_SUCCESS);
  CHECK(std::string(text) == "out of memory");
  REQUIRE(cuGetErrorName(CUDA_ERROR_NOT_READY, &text) == CUDA_SUCCESS);
  CHECK(std::string(text) == "CUDA_ERROR_NOT_READY");
  CHECK(cuGetErrorString(static_cast<CUresult>(998), &text) == CUDA_ERROR_INVALID_VALUE);
  CHECK(text == nullptr);
}
