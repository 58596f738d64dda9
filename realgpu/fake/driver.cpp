#include "driver.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstring>

#include "clock.hpp"
#include "gpuslice/realgpu/process_identity.hpp"
#include "timeline.hpp"
#include "visible_devices.hpp"

namespace gpuslice::fake {

using realgpu::ProcessId;
using realgpu::self_process;

namespace {

Driver* the_driver = nullptr;

// fork(): no thread may be inside the driver while the address space is
// copied; the child then starts with no GPU objects of its own (the
// parent's contexts and memory are the parent's, as with a real driver),
// but stays initialised, so it may simply create contexts again.
void before_fork() { the_driver->mutex.lock(); }
void after_fork_in_parent() { the_driver->mutex.unlock(); }
void after_fork_in_child() {
  the_driver->mutex.unlock();
  the_driver->drop_process_objects(false);
}

}  // namespace

Driver& driver() {
  static const bool made = [] {
    // Never destroyed: other threads may still call in during exit.
    the_driver = new Driver();
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    return true;
  }();
  (void)made;
  return *the_driver;
}

std::vector<Context*>& context_stack(const Driver& d) {
  thread_local std::uint64_t epoch = 0;
  thread_local std::vector<Context*> stack;
  if (epoch != d.epoch) {
    stack.clear();
    epoch = d.epoch;
  }
  return stack;
}

CUresult Driver::initialise() {
  // Only the fake's own variables trigger a reload; CUDA_VISIBLE_DEVICES
  // is read at (re)load, so an application changing it after cuInit sees
  // what it would see with the real driver.
  EnvSnapshot now =
      EnvSnapshot::take({kFleetVariable, kStateDirVariable, kContextMibVariable, kModuleMibVariable});
  if (initialised && now == environment) return CUDA_SUCCESS;
  // A real driver reads its environment once. The fake reloads when it
  // changed (tests switch fleets and state directories between cases),
  // starting this process afresh: everything it held is released.
  if (state) drop_process_objects(true);
  initialised = false;
  state.reset();
  fleet.clear();
  visible.clear();

  const std::string fleet_text = env_value(kFleetVariable).value_or(kDefaultFleet);
  FleetParse parsed = parse_fleet(fleet_text);
  if (!parsed.ok()) {
    report(parsed.error);
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::string error;
  const std::uint64_t context_mib = env_number(kContextMibVariable, 0, 0, std::uint64_t{1} << 30, error);
  const std::uint64_t module_mib = env_number(kModuleMibVariable, 0, 0, std::uint64_t{1} << 30, error);
  if (!error.empty()) {
    report(error);
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::unique_ptr<SharedState> attached =
      SharedState::attach(env_value(kStateDirVariable).value_or("/tmp"), fleet_text, parsed.devices, error);
  if (!attached) {
    report(error);
    return CUDA_ERROR_OPERATING_SYSTEM;
  }
  const std::optional<std::string> visible_text = env_value(kVisibleDevicesVariable);
  visible = visible_devices(visible_text ? std::optional<std::string_view>(*visible_text) : std::nullopt,
                            parsed.devices);
  if (visible.empty()) return CUDA_ERROR_NO_DEVICE;
  fleet = std::move(parsed.devices);
  state = std::move(attached);
  context_footprint_bytes = context_mib << 20;
  module_footprint_bytes = module_mib << 20;
  environment = std::move(now);
  initialised = true;
  return CUDA_SUCCESS;
}

void Driver::drop_process_objects(bool release_shared) {
  if (release_shared && state) {
    SharedState::Guard guard = state->lock();
    if (guard) ledger::forget(*guard, self_process());
  }
  allocations.clear();
  handles.clear();
  reserved_ranges.clear();
  mappings.clear();
  mapped_count.clear();
  released_handles.clear();
  host_allocations.clear();  // a fork child's copies; the parent frees its own
  host_registrations.clear();
  arrays.clear();
  mipmapped_arrays.clear();
  streams.clear();
  events.clear();
  modules.clear();
  libraries.clear();
  functions.clear();
  pools.clear();
  default_pools = {};
  graphs.clear();
  graph_execs.clear();
  contexts.clear();
  primary = {};
  live_contexts = {};
  last_end_ns = {};
  ++epoch;
}

CUresult Driver::require_initialised() const {
  return initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult Driver::device(CUdevice ordinal, std::size_t& physical) const {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= visible.size()) return CUDA_ERROR_INVALID_DEVICE;
  physical = visible[static_cast<std::size_t>(ordinal)];
  return CUDA_SUCCESS;
}

bool Driver::context_live(const Context* context) const {
  const Context* found = contexts.find(context);
  return found != nullptr && (!found->primary || found->retains > 0);
}

CUresult Driver::current_context(Context*& context) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  std::vector<Context*>& stack = context_stack(*this);
  if (stack.empty() || !context_live(stack.back())) return CUDA_ERROR_INVALID_CONTEXT;
  context = stack.back();
  return CUDA_SUCCESS;
}

CUresult Driver::stream_context(CUstream stream, Context*& context, Stream*& object) {
  object = nullptr;
  if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
    return current_context(context);
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  object = streams.find(stream);
  if (object == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (!context_live(object->context)) return CUDA_ERROR_INVALID_CONTEXT;
  context = object->context;
  return CUDA_SUCCESS;
}

CUresult Driver::attach_context(std::size_t physical) {
  SharedState::Guard guard = state->lock();
  if (!guard) return CUDA_ERROR_UNKNOWN;
  const ProcessId self = self_process();
  if (live_contexts[physical] == 0) {
    if (ledger::charge(*guard, self, physical, context_footprint_bytes, ledger::Kind::context) !=
        ledger::Charge::ok)
      return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ledger::add_context(*guard, self, physical);
  ++live_contexts[physical];
  return CUDA_SUCCESS;
}

void Driver::detach_context(Context* context) {
  SharedState::Guard guard = state->lock();
  const ProcessId self = self_process();
  auto release = [&](const Allocation& a) {
    if (guard) ledger::release(*guard, self, a.device, a.bytes, ledger::Kind::allocation);
  };
  // A destroyed context takes its memory with it, as on a real GPU.
  std::erase_if(allocations, [&](const auto& entry) {
    if (entry.second.context != context) return false;
    release(entry.second);
    return true;
  });
  for (Registry<Array>* registry : {&arrays, &mipmapped_arrays})
    registry->erase_if([&](const Array& array) {
      if (array.allocation.context != context) return false;
      release(array.allocation);
      return true;
    });
  streams.erase_if([&](const Stream& stream) { return stream.context == context; });
  events.erase_if([&](const Event& event) { return event.context == context; });
  modules.erase_if([&](const Module& module) {
    if (module.context != context) return false;
    if (module.bytes > 0 && guard)
      ledger::release(*guard, self, module.device, module.bytes, ledger::Kind::allocation);
    for (const auto& [name, function] : module.functions) functions.erase(function);
    return true;
  });
  const std::size_t physical = context->device;
  if (live_contexts[physical] > 0 && --live_contexts[physical] == 0 && guard)
    ledger::release(*guard, self, physical, context_footprint_bytes, ledger::Kind::context);
  if (guard) ledger::remove_context(*guard, self, physical);
}

CUresult Driver::charge(std::size_t physical, std::uint64_t bytes, std::uint64_t& address) {
  SharedState::Guard guard = state->lock();
  if (!guard) return CUDA_ERROR_UNKNOWN;
  if (ledger::charge(*guard, self_process(), physical, bytes, ledger::Kind::allocation) != ledger::Charge::ok)
    return CUDA_ERROR_OUT_OF_MEMORY;
  address = ledger::reserve_address(*guard, bytes);
  return CUDA_SUCCESS;
}

void Driver::uncharge(std::size_t physical, std::uint64_t bytes) {
  SharedState::Guard guard = state->lock();
  if (guard) ledger::release(*guard, self_process(), physical, bytes, ledger::Kind::allocation);
}

std::uint64_t driver_rounded(std::uint64_t bytes) {
  const std::uint64_t unit = bytes >= kGranularity ? kGranularity : kSmallAlignment;
  if (bytes > UINT64_MAX - (unit - 1)) return 0;
  return (bytes + unit - 1) / unit * unit;
}

CUresult Driver::allocate(Context* context, std::size_t physical, std::uint64_t requested, CUdeviceptr* out) {
  if (out == nullptr || requested == 0) return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t bytes = driver_rounded(requested);
  if (bytes == 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::uint64_t address = 0;
  if (const CUresult rc = charge(physical, bytes, address); rc != CUDA_SUCCESS) return rc;
  allocations[address] = Allocation{bytes, physical, context};
  *out = address;
  return CUDA_SUCCESS;
}

bool Driver::covers(CUdeviceptr address, std::size_t bytes) const {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin()) return false;
  --it;
  const std::uint64_t offset = address - it->first;
  return offset < it->second.bytes && bytes <= it->second.bytes - offset;
}

CUresult Driver::run(Context* context, Stream* stream, std::span<const std::int64_t> durations_ns) {
  if (durations_ns.empty()) return CUDA_SUCCESS;
  SharedState::Guard guard = state->lock();
  if (!guard) return CUDA_ERROR_UNKNOWN;
  const std::int64_t end =
      timeline::enqueue(*guard, context->device, nvml_pid(self_process().pid), durations_ns, monotonic_ns());
  last_end_ns[context->device] = std::max(last_end_ns[context->device], end);
  if (stream != nullptr) stream->last_end_ns = std::max(stream->last_end_ns, end);
  return CUDA_SUCCESS;
}

std::int64_t Driver::work_end(const Context* context, const Stream* stream) const {
  return stream != nullptr ? stream->last_end_ns : last_end_ns[context->device];
}

CUresult kernel_duration(const Function& function, void** params, void** extra, std::int64_t& duration_ns) {
  constexpr std::int64_t kMinimum = 1000;  // every kernel takes at least 1 us
  duration_ns = kMinimum;
  if (!function.spin) return CUDA_SUCCESS;
  std::uint32_t microseconds = 0;
  if (params != nullptr && params[0] != nullptr) {
    std::memcpy(&microseconds, params[0], sizeof microseconds);
  } else if (extra != nullptr) {
    // The packed form: {CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
    // CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}.
    const void* buffer = nullptr;
    std::size_t size = 0;
    for (std::size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != nullptr)
        std::memcpy(&size, extra[i + 1], sizeof size);
    }
    if (buffer == nullptr || size < sizeof microseconds) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(&microseconds, buffer, sizeof microseconds);
  } else {
    return CUDA_ERROR_INVALID_VALUE;
  }
  duration_ns = std::max<std::int64_t>(kMinimum, std::int64_t{microseconds} * 1000);
  return CUDA_SUCCESS;
}

}  // namespace gpuslice::fake
