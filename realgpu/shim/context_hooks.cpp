// Start-up, contexts and modules: a malformed slice environment is refused
// at cuInit; what contexts and modules take on the device is measured.
#include "runtime.hpp"

using gpuslice::shim::Level;
using gpuslice::shim::Runtime;

namespace {

// Makes a context on `dev` through `create`. The first one also tells the
// shim its host pid (NVML's numbering, see Runtime::host_pid_before_context);
// then the footprint is measured.
template <class Create>
CUresult context_made(CUdevice dev, Create&& create) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const int ordinal = static_cast<int>(dev);
  const auto before = rt.host_pid_before_context(ordinal);
  const CUresult rc = create();
  rt.host_pid_after_context(ordinal, before);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(ordinal, gpuslice::realgpu::Footprint::Context);
  return rc;
}

// Modules and libraries load code (and its globals) onto the current
// device: measured like a context.
CUresult code_loaded(CUresult rc) {
  auto& rt = Runtime::get();
  if (rc == CUDA_SUCCESS)
    rt.measure_footprint(rt.current_ordinal_or(0), gpuslice::realgpu::Footprint::Module);
  return rc;
}

}  // namespace

// Contexts and modules take memory the application never asked for; it is
// measured (NVML's per-process figure) and recorded as the footprint.
GPUSLICE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  return context_made(dev, [&] { return Runtime::get().real().cuDevicePrimaryCtxRetain(ctx, dev); });
}
GPUSLICE_EXPORT CUresult cuCtxCreate(CUcontext* ctx, unsigned int flags, CUdevice dev) {
  return context_made(dev, [&] { return Runtime::get().real().cuCtxCreate(ctx, flags, dev); });
}
GPUSLICE_EXPORT CUresult cuCtxCreate_v2(CUcontext* ctx, unsigned int flags, CUdevice dev) {
  return context_made(dev, [&] { return Runtime::get().real().cuCtxCreate_v2(ctx, flags, dev); });
}
GPUSLICE_EXPORT CUresult cuCtxCreate_v3(CUcontext* ctx, CUexecAffinityParam* params, int count,
                                        unsigned int flags, CUdevice dev) {
  return context_made(dev,
                      [&] { return Runtime::get().real().cuCtxCreate_v3(ctx, params, count, flags, dev); });
}
GPUSLICE_EXPORT CUresult cuCtxCreate_v4(CUcontext* ctx, CUctxCreateParams* params, unsigned int flags,
                                        CUdevice dev) {
  return context_made(dev, [&] { return Runtime::get().real().cuCtxCreate_v4(ctx, params, flags, dev); });
}
GPUSLICE_EXPORT CUresult cuGreenCtxCreate(CUgreenCtx* ctx, CUdevResourceDesc desc, CUdevice dev,
                                          unsigned int flags) {
  return context_made(dev, [&] { return Runtime::get().real().cuGreenCtxCreate(ctx, desc, dev, flags); });
}

GPUSLICE_EXPORT CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  return code_loaded(Runtime::get().real().cuModuleLoad(module, fname));
}
GPUSLICE_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return code_loaded(Runtime::get().real().cuModuleLoadData(module, image));
}
GPUSLICE_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int num_options,
                                            CUjit_option* options, void** values) {
  return code_loaded(Runtime::get().real().cuModuleLoadDataEx(module, image, num_options, options, values));
}
GPUSLICE_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fat_cubin) {
  return code_loaded(Runtime::get().real().cuModuleLoadFatBinary(module, fat_cubin));
}
// cudart 12+/13 loads an application's kernels through libraries.
GPUSLICE_EXPORT CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jit_options,
                                           void** jit_values, unsigned int jit_count,
                                           CUlibraryOption* library_options, void** library_values,
                                           unsigned int library_count) {
  return code_loaded(Runtime::get().real().cuLibraryLoadData(
      library, code, jit_options, jit_values, jit_count, library_options, library_values, library_count));
}
GPUSLICE_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* file,
                                               CUjit_option* jit_options, void** jit_values,
                                               unsigned int jit_count, CUlibraryOption* library_options,
                                               void** library_values, unsigned int library_count) {
  return code_loaded(Runtime::get().real().cuLibraryLoadFromFile(
      library, file, jit_options, jit_values, jit_count, library_options, library_values, library_count));
}

GPUSLICE_EXPORT CUresult cuInit(unsigned int flags) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) {
    rt.log(Level::Error, "cuInit refused: %s", rt.env_error().c_str());
    return CUDA_ERROR_INVALID_VALUE;
  }
  return rt.real().cuInit(flags);
}
