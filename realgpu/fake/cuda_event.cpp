// Events: a record takes the end of the work its stream has queued on the
// shared timeline; synchronising sleeps until then. Enough for a host to
// keep one stream fed (wait for the batch before last, not for the queue).
#include "clock.hpp"
#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;
using gpuslice::fake::Event;
using gpuslice::fake::Stream;

namespace {

CUresult record(CUevent event, CUstream stream) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Event* object = d.events.find(event);
  if (object == nullptr)
    return d.require_initialised() == CUDA_SUCCESS ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_NOT_INITIALIZED;
  Context* context = nullptr;
  Stream* s = nullptr;
  if (const CUresult rc = d.stream_context(stream, context, s); rc != CUDA_SUCCESS) return rc;
  if (context != object->context) return CUDA_ERROR_INVALID_HANDLE;
  object->end_ns = d.work_end(context, s);
  return CUDA_SUCCESS;
}

CUresult end_of(CUevent event, std::int64_t& end_ns) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const Event* object = d.events.find(event);
  if (object == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  end_ns = object->end_ns;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult cuEventCreate(CUevent* phEvent, unsigned int /*Flags*/) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (phEvent == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto event = std::make_unique<Event>();
  event->context = context;
  *phEvent = reinterpret_cast<CUevent>(d.events.add(std::move(event)));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuEventDestroy_v2(CUevent hEvent) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  return d.events.erase(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

extern "C" CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream); }
extern "C" CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream); }

extern "C" CUresult cuEventSynchronize(CUevent hEvent) {
  std::int64_t end = 0;
  if (const CUresult rc = end_of(hEvent, end); rc != CUDA_SUCCESS) return rc;
  gpuslice::fake::sleep_until_ns(end);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuEventQuery(CUevent hEvent) {
  std::int64_t end = 0;
  if (const CUresult rc = end_of(hEvent, end); rc != CUDA_SUCCESS) return rc;
  return gpuslice::fake::monotonic_ns() >= end ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
