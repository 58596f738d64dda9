// Every launch path passes the compute gate first: plain, extended,
// cooperative and graph launches, with and without per-thread default
// streams (HAMi-core misses all but the first two).
#include "compute_limiter.hpp"
#include "runtime.hpp"

using gpuslice::shim::ComputeLimiter;
using gpuslice::shim::Runtime;

GPUSLICE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, CUstream stream,
                                        void** params, void** extra) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
GPUSLICE_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                             unsigned by, unsigned bz, unsigned shared, CUstream stream,
                                             void** params, void** extra) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchKernel_ptsz(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
GPUSLICE_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params,
                                          void** extra) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchKernelEx(config, f, params, extra);
}
GPUSLICE_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params,
                                               void** extra) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchKernelEx_ptsz(config, f, params, extra);
}
GPUSLICE_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                                   CUstream stream, void** params) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params);
}
GPUSLICE_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                        unsigned bx, unsigned by, unsigned bz,
                                                        unsigned shared, CUstream stream, void** params) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchCooperativeKernel_ptsz(f, gx, gy, gz, bx, by, bz, shared, stream,
                                                              params);
}
GPUSLICE_EXPORT CUresult cuGraphLaunch(CUgraphExec graph, CUstream stream) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuGraphLaunch(graph, stream);
}
GPUSLICE_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec graph, CUstream stream) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuGraphLaunch_ptsz(graph, stream);
}
// The deprecated launches of the pre-4.0 API still reach the device.
GPUSLICE_EXPORT CUresult cuLaunch(CUfunction f) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunch(f);
}
GPUSLICE_EXPORT CUresult cuLaunchGrid(CUfunction f, int width, int height) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchGrid(f, width, height);
}
GPUSLICE_EXPORT CUresult cuLaunchGridAsync(CUfunction f, int width, int height, CUstream stream) {
  ComputeLimiter::get().admit();
  return Runtime::get().real().cuLaunchGridAsync(f, width, height, stream);
}
