// Streams and kernel launches. A launch only books device time on the
// shared per-device timeline and returns at once; synchronisation sleeps
// until this process's booked work has ended.
#include "clock.hpp"
#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;
using gpuslice::fake::Function;
using gpuslice::fake::Stream;

namespace {

struct Dims {
  unsigned grid[3];
  unsigned block[3];
};

CUresult launch(CUfunction f, const Dims& dims, CUstream stream, void** params, void** extra) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const Function* function = d.functions.find(f);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  for (int i = 0; i < 3; ++i)
    if (dims.grid[i] == 0 || dims.block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
  if (static_cast<unsigned long long>(dims.block[0]) * dims.block[1] * dims.block[2] > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  // Both kinds of arguments at once is an error on the real driver too.
  if (params != nullptr && extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* context = nullptr;
  Stream* object = nullptr;
  if (const CUresult rc = d.stream_context(stream, context, object); rc != CUDA_SUCCESS) return rc;
  std::int64_t duration = 0;
  if (const CUresult rc = gpuslice::fake::kernel_duration(*function, params, extra, duration);
      rc != CUDA_SUCCESS)
    return rc;
  return d.run(context, object, {&duration, 1});
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return launch(f,
                Dims{{config->gridDimX, config->gridDimY, config->gridDimZ},
                     {config->blockDimX, config->blockDimY, config->blockDimZ}},
                config->hStream, params, extra);
}

CUresult synchronize(CUstream stream) {
  std::int64_t deadline = 0;
  {
    Driver& d = driver();
    std::lock_guard lock(d.mutex);
    Context* context = nullptr;
    Stream* object = nullptr;
    if (const CUresult rc = d.stream_context(stream, context, object); rc != CUDA_SUCCESS) return rc;
    deadline = d.work_end(context, object);
  }
  gpuslice::fake::sleep_until_ns(deadline);
  return CUDA_SUCCESS;
}

CUresult query(CUstream stream) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  Stream* object = nullptr;
  if (const CUresult rc = d.stream_context(stream, context, object); rc != CUDA_SUCCESS) return rc;
  return gpuslice::fake::monotonic_ns() >= d.work_end(context, object) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

}  // namespace

extern "C" CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (phStream == nullptr || (Flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  auto stream = std::make_unique<Stream>();
  stream->context = context;
  *phStream = reinterpret_cast<CUstream>(d.streams.add(std::move(stream)));
  return CUDA_SUCCESS;
}

// Work already booked keeps running, as it does when a real stream is
// destroyed before its work completes.
extern "C" CUresult cuStreamDestroy_v2(CUstream hStream) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  return d.streams.erase(hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

extern "C" CUresult cuStreamSynchronize(CUstream hStream) { return synchronize(hStream); }
extern "C" CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return synchronize(hStream); }
extern "C" CUresult cuStreamQuery(CUstream hStream) { return query(hStream); }
extern "C" CUresult cuStreamQuery_ptsz(CUstream hStream) { return query(hStream); }

extern "C" CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                   unsigned int blockDimZ, unsigned int /*sharedMemBytes*/, CUstream hStream,
                                   void** kernelParams, void** extra) {
  return launch(f, Dims{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}}, hStream,
                kernelParams, extra);
}

extern "C" CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int /*sharedMemBytes*/,
                                        CUstream hStream, void** kernelParams, void** extra) {
  return launch(f, Dims{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}}, hStream,
                kernelParams, extra);
}

extern "C" CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                     void** extra) {
  return launch_ex(config, f, kernelParams, extra);
}

extern "C" CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                          void** extra) {
  return launch_ex(config, f, kernelParams, extra);
}

extern "C" CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                              unsigned int gridDimZ, unsigned int blockDimX,
                                              unsigned int blockDimY, unsigned int blockDimZ,
                                              unsigned int /*sharedMemBytes*/, CUstream hStream,
                                              void** kernelParams) {
  return launch(f, Dims{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}}, hStream,
                kernelParams, nullptr);
}

extern "C" CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                   unsigned int gridDimZ, unsigned int blockDimX,
                                                   unsigned int blockDimY, unsigned int blockDimZ,
                                                   unsigned int /*sharedMemBytes*/, CUstream hStream,
                                                   void** kernelParams) {
  return launch(f, Dims{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}}, hStream,
                kernelParams, nullptr);
}
