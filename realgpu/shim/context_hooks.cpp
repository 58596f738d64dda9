// Start-up, contexts and modules: a malformed slice environment is refused
// at cuInit; what contexts and modules take on the device is measured.
#include "runtime.hpp"

using gpuslice::shim::Level;
using gpuslice::shim::Runtime;

// Contexts and modules take memory the application never asked for; it is
// measured (NVML's per-process figure) and recorded as the footprint.
GPUSLICE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const CUresult rc = rt.real().cuDevicePrimaryCtxRetain(ctx, dev);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(static_cast<int>(dev));
  return rc;
}
GPUSLICE_EXPORT CUresult cuCtxCreate_v2(CUcontext* ctx, unsigned int flags, CUdevice dev) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const CUresult rc = rt.real().cuCtxCreate_v2(ctx, flags, dev);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(static_cast<int>(dev));
  return rc;
}
GPUSLICE_EXPORT CUresult cuCtxCreate_v4(CUcontext* ctx, CUctxCreateParams* params, unsigned int flags,
                                        CUdevice dev) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const CUresult rc = rt.real().cuCtxCreate_v4(ctx, params, flags, dev);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(static_cast<int>(dev));
  return rc;
}
GPUSLICE_EXPORT CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  auto& rt = Runtime::get();
  const CUresult rc = rt.real().cuModuleLoad(module, fname);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(rt.current_ordinal_or(0));
  return rc;
}
GPUSLICE_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  auto& rt = Runtime::get();
  const CUresult rc = rt.real().cuModuleLoadData(module, image);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(rt.current_ordinal_or(0));
  return rc;
}
GPUSLICE_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int num_options,
                                            CUjit_option* options, void** values) {
  auto& rt = Runtime::get();
  const CUresult rc = rt.real().cuModuleLoadDataEx(module, image, num_options, options, values);
  if (rc == CUDA_SUCCESS) rt.measure_footprint(rt.current_ordinal_or(0));
  return rc;
}

GPUSLICE_EXPORT CUresult cuInit(unsigned int flags) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) {
    rt.log(Level::Error, "cuInit refused: %s", rt.env_error().c_str());
    return CUDA_ERROR_INVALID_VALUE;
  }
  return rt.real().cuInit(flags);
}
