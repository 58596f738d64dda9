// Kernels book time on one shared per-device timeline: launches return at
// once, synchronisation waits for the caller's work, processes queue
// behind each other, and NVML reports the busy share.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <thread>
#include <vector>

#include "fake_fixture.hpp"

using namespace fake_test;

namespace {

constexpr std::int64_t kMs = 1'000'000;

nvmlDevice_t nvml_device(unsigned index) {
  nvmlDevice_t device = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(index, &device) == NVML_SUCCESS);
  return device;
}

}  // namespace

TEST_CASE("a launch returns at once and synchronize waits for the kernel", "[fake][timeline]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  const CUfunction spin = spin_function();
  REQUIRE(spin != nullptr);

  const std::int64_t start = now_ns();
  REQUIRE(launch_spin(spin, 50'000) == CUDA_SUCCESS);
  CHECK(now_ns() - start < 20 * kMs);
  CHECK(cuStreamQuery(nullptr) == CUDA_ERROR_NOT_READY);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(now_ns() - start >= 50 * kMs);
  CHECK(cuStreamQuery(nullptr) == CUDA_SUCCESS);

  SECTION("on a stream") {
    CUstream stream = nullptr;
    REQUIRE(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
    const std::int64_t again = now_ns();
    REQUIRE(launch_spin(spin, 30'000, stream) == CUDA_SUCCESS);
    CHECK(cuStreamQuery_ptsz(stream) == CUDA_ERROR_NOT_READY);
    REQUIRE(cuStreamSynchronize(stream) == CUDA_SUCCESS);
    CHECK(now_ns() - again >= 30 * kMs);
    CHECK(cuStreamQuery(stream) == CUDA_SUCCESS);
    REQUIRE(cuStreamDestroy_v2(stream) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(stream) == CUDA_ERROR_INVALID_HANDLE);
  }
  SECTION("back-to-back kernels queue") {
    const std::int64_t again = now_ns();
    for (int i = 0; i < 4; ++i) REQUIRE(launch_spin(spin, 10'000) == CUDA_SUCCESS);
    REQUIRE(cuStreamSynchronize_ptsz(nullptr) == CUDA_SUCCESS);
    CHECK(now_ns() - again >= 40 * kMs);
  }
  SECTION("other launch paths book time too") {
    std::uint32_t us = 20'000;
    void* params[] = {&us};
    CUlaunchConfig config{};
    config.gridDimX = config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = config.blockDimY = config.blockDimZ = 1;
    const std::int64_t again = now_ns();
    REQUIRE(cuLaunchKernelEx(&config, spin, params, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuLaunchKernelEx_ptsz(&config, spin, params, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuLaunchCooperativeKernel(spin, 1, 1, 1, 1, 1, 1, 0, nullptr, params) == CUDA_SUCCESS);
    REQUIRE(cuLaunchCooperativeKernel_ptsz(spin, 1, 1, 1, 1, 1, 1, 0, nullptr, params) == CUDA_SUCCESS);
    // The packed-argument form of cuLaunchKernel.
    size_t size = sizeof us;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &us, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    REQUIRE(cuLaunchKernel_ptsz(spin, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra) == CUDA_SUCCESS);
    REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
    CHECK(now_ns() - again >= 100 * kMs);
  }
  SECTION("bad launches are refused") {
    CHECK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch_spin(reinterpret_cast<CUfunction>(&env), 1) == CUDA_ERROR_INVALID_HANDLE);
    std::uint32_t us = 1;
    void* params[] = {&us};
    CHECK(cuLaunchKernel(spin, 0, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuLaunchKernel(spin, 1, 1, 1, 1024, 2, 1, 0, nullptr, params, nullptr) == CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("modules accept anything, functions exist for any non-empty name", "[fake][timeline]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  CUmodule module = nullptr;
  REQUIRE(cuModuleLoadDataEx(&module,
                             "\x7f"
                             "ELF whatever",
                             0, nullptr, nullptr) == CUDA_SUCCESS);
  CUfunction a = nullptr;
  CUfunction b = nullptr;
  REQUIRE(cuModuleGetFunction(&a, module, "vector_add") == CUDA_SUCCESS);
  REQUIRE(cuModuleGetFunction(&b, module, "vector_add") == CUDA_SUCCESS);
  CHECK(a == b);
  CHECK(cuModuleGetFunction(&b, module, "") == CUDA_ERROR_NOT_FOUND);
  // Any function other than spin runs for 1 us and takes no parameters.
  REQUIRE(cuLaunchKernel(a, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuModuleUnload(module) == CUDA_SUCCESS);
  CHECK(cuLaunchKernel(a, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuModuleLoad(&module, "/nonexistent/kernel.cubin") == CUDA_ERROR_FILE_NOT_FOUND);
  REQUIRE(cuModuleLoad(&module, "/proc/self/exe") == CUDA_SUCCESS);

  CUlibrary library = nullptr;
  REQUIRE(cuLibraryLoadData(&library, "x", nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  CUkernel kernel = nullptr;
  REQUIRE(cuLibraryGetKernel(&kernel, library, "spin") == CUDA_SUCCESS);
  const std::int64_t start = now_ns();
  REQUIRE(launch_spin(reinterpret_cast<CUfunction>(kernel), 20'000) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(now_ns() - start >= 20 * kMs);
  REQUIRE(cuLibraryUnload(library) == CUDA_SUCCESS);
}

TEST_CASE("a graph runs its kernel nodes back to back", "[fake][timeline][graph]") {
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  const CUfunction spin = spin_function();
  CUgraph graph = nullptr;
  REQUIRE(cuGraphCreate(&graph, 0) == CUDA_SUCCESS);
  std::uint32_t first_us = 20'000;
  std::uint32_t second_us = 30'000;
  void* first_params[] = {&first_us};
  void* second_params[] = {&second_us};
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = spin;
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = first_params;
  CUgraphNode first = nullptr;
  REQUIRE(cuGraphAddKernelNode_v2(&first, graph, nullptr, 0, &params) == CUDA_SUCCESS);
  params.kernelParams = second_params;
  CUgraphNode second = nullptr;
  REQUIRE(cuGraphAddKernelNode_v2(&second, graph, &first, 1, &params) == CUDA_SUCCESS);
  first_us = 1;  // arguments are copied when the node is added
  CUgraphExec exec = nullptr;
  REQUIRE(cuGraphInstantiateWithFlags(&exec, graph, 0) == CUDA_SUCCESS);

  const std::int64_t start = now_ns();
  REQUIRE(cuGraphLaunch(exec, nullptr) == CUDA_SUCCESS);
  CHECK(now_ns() - start < 20 * kMs);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(now_ns() - start >= 50 * kMs);
  REQUIRE(cuGraphLaunch_ptsz(exec, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(now_ns() - start >= 100 * kMs);

  CUgraphNode stranger = reinterpret_cast<CUgraphNode>(&params);
  CHECK(cuGraphAddKernelNode_v2(&second, graph, &stranger, 1, &params) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuGraphExecDestroy(exec) == CUDA_SUCCESS);
  REQUIRE(cuGraphDestroy(graph) == CUDA_SUCCESS);
  CHECK(cuGraphLaunch(exec, nullptr) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("kernels of two processes share one timeline", "[fake][timeline]") {
  FakeEnvironment env;
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  constexpr int kKernels = 5;
  constexpr std::uint32_t kKernelUs = 20'000;
  Signal ready[2];
  Signal go[2];
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = spawn([&, c] {
      if (init_with_context() == nullptr) return 1;
      const CUfunction spin = spin_function();
      if (spin == nullptr) return 2;
      ready[c].notify();
      if (!go[c].wait()) return 3;
      for (int k = 0; k < kKernels; ++k)
        if (launch_spin(spin, kKernelUs) != CUDA_SUCCESS) return 4;
      return cuCtxSynchronize() == CUDA_SUCCESS ? 0 : 5;
    });
  }
  REQUIRE(ready[0].wait());
  REQUIRE(ready[1].wait());
  const std::int64_t start = now_ns();
  go[0].notify();
  go[1].notify();
  CHECK(wait_child(children[0]) == 0);
  CHECK(wait_child(children[1]) == 0);
  // Each alone needs 100 ms; queued behind each other, the last one to
  // finish waited for all 200 ms of work.
  CHECK(now_ns() - start >= 2 * kKernels * std::int64_t{kKernelUs} * 1000);
}

TEST_CASE("NVML utilisation is the busy share of the sampling window", "[fake][timeline][nvml]") {
  SECTION("default 200 ms window") {
    FakeEnvironment env;
    REQUIRE(init_with_context() != nullptr);
    REQUIRE(nvml_ready());
    nvmlUtilization_t utilization{};
    REQUIRE(nvmlDeviceGetUtilizationRates(nvml_device(0), &utilization) == NVML_SUCCESS);
    CHECK(utilization.gpu == 0);
    REQUIRE(launch_spin(spin_function(), 50'000) == CUDA_SUCCESS);
    REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
    REQUIRE(nvmlDeviceGetUtilizationRates(nvml_device(0), &utilization) == NVML_SUCCESS);
    CHECK(utilization.gpu >= 23);
    CHECK(utilization.gpu <= 27);
    CHECK(utilization.memory == 0);
    CHECK(nvmlShutdown() == NVML_SUCCESS);
  }
  SECTION("GPUSLICE_FAKE_UTIL_WINDOW_MS; only what has run so far counts") {
    FakeEnvironment env({.util_window_ms = "1000"});
    REQUIRE(init_with_context() != nullptr);
    REQUIRE(nvml_ready());
    const std::int64_t start = now_ns();
    REQUIRE(launch_spin(spin_function(), 400'000) == CUDA_SUCCESS);
    ::usleep(100'000);
    nvmlUtilization_t utilization{};
    REQUIRE(nvmlDeviceGetUtilizationRates(nvml_device(0), &utilization) == NVML_SUCCESS);
    const auto elapsed_pct = static_cast<unsigned>((now_ns() - start) / (10 * kMs));
    CHECK(utilization.gpu >= 9);
    CHECK(utilization.gpu <= elapsed_pct + 1);
    CHECK(utilization.gpu < 40);
    REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
    REQUIRE(nvmlDeviceGetUtilizationRates(nvml_device(0), &utilization) == NVML_SUCCESS);
    CHECK(utilization.gpu >= 38);
    CHECK(utilization.gpu <= 41);
    CHECK(nvmlShutdown() == NVML_SUCCESS);
  }
}

TEST_CASE("NVML process utilisation: a sample per sampling period and busy process",
          "[fake][timeline][nvml]") {
  // The real NVML (H100, driver 580) keeps one sample per 200 ms period per
  // process that ran kernels in it, stamped with the period's end, smUtil a
  // whole percent of that period; periods without a kernel of a process
  // have no sample of it.
  FakeEnvironment env;
  REQUIRE(init_with_context() != nullptr);
  REQUIRE(nvml_ready());
  const nvmlDevice_t device = nvml_device(0);
  constexpr unsigned long long kPeriodUs = 200'000;
  unsigned count = 0;
  // Nothing ran yet.
  CHECK(nvmlDeviceGetProcessUtilization(device, nullptr, &count, 0) == NVML_ERROR_NOT_FOUND);

  const auto since_us = static_cast<unsigned long long>(now_ns() / 1000);
  const pid_t child = spawn([] {
    if (init_with_context() == nullptr) return 1;
    if (launch_spin(spin_function(), 30'000) != CUDA_SUCCESS) return 2;
    return cuCtxSynchronize() == CUDA_SUCCESS ? 0 : 3;
  });
  REQUIRE(wait_child(child) == 0);
  REQUIRE(launch_spin(spin_function(), 20'000) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  const auto work_end_us = static_cast<unsigned long long>(now_ns() / 1000);
  // The periods holding the work are complete once the next boundary passed.
  std::this_thread::sleep_for(std::chrono::microseconds(kPeriodUs - work_end_us % kPeriodUs + 5'000));

  count = 0;
  REQUIRE(nvmlDeviceGetProcessUtilization(device, nullptr, &count, since_us) == NVML_ERROR_INSUFFICIENT_SIZE);
  REQUIRE(count >= 2);  // each process ran in one period, or straddled two
  REQUIRE(count <= 4);
  std::vector<nvmlProcessUtilizationSample_t> samples(count);
  unsigned short_count = 1;
  REQUIRE(nvmlDeviceGetProcessUtilization(device, samples.data(), &short_count, since_us) ==
          NVML_ERROR_INSUFFICIENT_SIZE);
  CHECK(short_count == count);
  REQUIRE(nvmlDeviceGetProcessUtilization(device, samples.data(), &count, since_us) == NVML_SUCCESS);
  double child_us = 0, own_us = 0;
  unsigned long long newest = 0;
  for (const nvmlProcessUtilizationSample_t& sample : samples) {
    const bool is_child = sample.pid == static_cast<unsigned>(child);
    CHECK((is_child || sample.pid == static_cast<unsigned>(::getpid())));
    CHECK(sample.timeStamp % kPeriodUs == 0);  // a period's end
    CHECK(sample.timeStamp > since_us);
    CHECK(sample.timeStamp <= work_end_us + kPeriodUs);
    CHECK(sample.memUtil == 0);
    (is_child ? child_us : own_us) += sample.smUtil / 100.0 * static_cast<double>(kPeriodUs);
    newest = std::max(newest, sample.timeStamp);
  }
  // Whole percents of a 200 ms period: within 1 ms per sample of the busy time.
  INFO("child " << child_us << " us, own " << own_us << " us");
  CHECK(std::abs(child_us - 30'000) <= 2'000);
  CHECK(std::abs(own_us - 20'000) <= 2'000);
  // Nothing ran since: a later period has no sample.
  std::this_thread::sleep_for(std::chrono::microseconds(kPeriodUs + 5'000));
  CHECK(nvmlDeviceGetProcessUtilization(device, samples.data(), &count, newest) == NVML_ERROR_NOT_FOUND);
  CHECK(count == 0);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}
