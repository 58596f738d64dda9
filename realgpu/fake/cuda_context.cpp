// Contexts: primary (retained/released, one per device and process) and
// created ones, plus the per-thread current-context stack. A process's
// first context on a device charges GPUSLICE_FAKE_CONTEXT_MIB there.
#include <algorithm>

#include "clock.hpp"
#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;

namespace {

CUcontext handle(Context* context) { return reinterpret_cast<CUcontext>(context); }

CUresult create_context(CUcontext* pctx, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult rc = d.attach_context(physical); rc != CUDA_SUCCESS) return rc;
  Context* context = d.contexts.add(std::make_unique<Context>(Context{dev, physical, false, 0}));
  // Like the real driver, a new context becomes current on this thread.
  gpuslice::fake::context_stack(d).push_back(context);
  *pctx = handle(context);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context*& primary = d.primary[static_cast<std::size_t>(dev)];
  // The handle outlives a release to zero, so a later retain returns the
  // same value, as the real driver's does.
  if (primary == nullptr)
    primary = d.contexts.add(std::make_unique<Context>(Context{dev, physical, true, 0}));
  if (primary->retains == 0) {
    if (const CUresult rc = d.attach_context(physical); rc != CUDA_SUCCESS) return rc;
  }
  ++primary->retains;
  *pctx = handle(primary);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  Context* primary = d.primary[static_cast<std::size_t>(dev)];
  if (primary == nullptr || primary->retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
  // At zero the primary context is destroyed with everything it owns.
  if (--primary->retains == 0) d.detach_context(primary);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int /*flags*/, CUdevice dev) {
  return create_context(pctx, dev);
}

// Execution-affinity and CIG parameters have no meaning on the fake.
extern "C" CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* /*ctxCreateParams*/,
                                   unsigned int /*flags*/, CUdevice dev) {
  return create_context(pctx, dev);
}

extern "C" CUresult cuCtxDestroy_v2(CUcontext ctx) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Context* context = d.contexts.find(ctx);
  if (context == nullptr || context->primary) return CUDA_ERROR_INVALID_CONTEXT;
  d.detach_context(context);
  std::erase(gpuslice::fake::context_stack(d), context);
  d.contexts.erase(context);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxSetCurrent(CUcontext ctx) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  std::vector<Context*>& stack = gpuslice::fake::context_stack(d);
  if (ctx == nullptr) {
    if (!stack.empty()) stack.pop_back();
    return CUDA_SUCCESS;
  }
  Context* context = d.contexts.find(ctx);
  if (!d.context_live(context)) return CUDA_ERROR_INVALID_CONTEXT;
  if (stack.empty())
    stack.push_back(context);
  else
    stack.back() = context;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxGetCurrent(CUcontext* pctx) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::vector<Context*>& stack = gpuslice::fake::context_stack(d);
  *pctx = stack.empty() ? nullptr : handle(stack.back());
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxGetDevice(CUdevice* device) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = context->ordinal;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Context* context = d.contexts.find(ctx);
  if (!d.context_live(context)) return CUDA_ERROR_INVALID_CONTEXT;
  gpuslice::fake::context_stack(d).push_back(context);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  std::vector<Context*>& stack = gpuslice::fake::context_stack(d);
  if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx != nullptr) *pctx = handle(stack.back());
  stack.pop_back();
  return CUDA_SUCCESS;
}

extern "C" CUresult cuCtxSynchronize(void) {
  std::int64_t deadline = 0;
  {
    Driver& d = driver();
    std::lock_guard lock(d.mutex);
    Context* context = nullptr;
    if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
    deadline = d.work_end(context, nullptr);
  }
  // Sleep without the driver lock: other threads keep launching meanwhile.
  gpuslice::fake::sleep_until_ns(deadline);
  return CUDA_SUCCESS;
}
