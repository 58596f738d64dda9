// The fake libcuda's process-local side: configuration, the objects behind
// CUDA handles (contexts, streams, modules, ...) and the calling thread's
// context stack. Machine-wide facts (memory held, kernel timeline) live in
// the SharedState; this is only what a process would keep in its own
// address space with a real driver.
//
// Every API entry point takes Driver::mutex for its whole body, except
// while sleeping in a synchronize. Lock order: Driver::mutex, then the
// shared state mutex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_api.hpp"
#include "device_table.hpp"
#include "environment.hpp"
#include "ledger.hpp"
#include "shared_state.hpp"

namespace gpuslice::fake {

struct Context {
  int ordinal = 0;         // as this process numbers devices (CUDA_VISIBLE_DEVICES)
  std::size_t device = 0;  // physical index into the fleet / shared state
  bool primary = false;
  unsigned retains = 0;  // primary contexts: live while above zero
};

struct Pool;

struct Allocation {
  std::uint64_t bytes = 0;
  std::size_t device = 0;
  Context* context = nullptr;  // freed with it; nullptr: lives until released
  Pool* pool = nullptr;        // stream-ordered: its pool takes it back on free
};

struct Stream {
  Context* context = nullptr;
  std::int64_t last_end_ns = 0;
};

// An event completes when the work its stream had queued at cuEventRecord
// has ended (a never-recorded event is complete, as on the real driver).
struct Event {
  Context* context = nullptr;
  std::int64_t end_ns = 0;
};

struct Function {
  std::string name;
  bool spin = false;  // `spin(unsigned microseconds)`; anything else runs 1 us
};

// A module (context-bound) or a library (context-independent): a set of
// functions looked up by name, each handed out once.
struct Module {
  Context* context = nullptr;
  std::uint64_t bytes = 0;  // what loading it took on `device`
  std::size_t device = 0;
  std::map<std::string, Function*, std::less<>> functions;
};

struct Array {
  Allocation allocation;
};

// A memory pool keeps freed memory, up to its release threshold (0 by
// default; PyTorch's cudaMallocAsync backend sets UINT64_MAX), charged on
// the card and reuses it for its next allocations.
struct Pool {
  int ordinal = 0;
  std::size_t device = 0;
  bool is_default = false;
  std::uint64_t release_threshold = 0;
  std::uint64_t cached = 0;  // freed, still charged to the card
};

struct GraphNode {
  std::int64_t duration_ns = 0;
};

struct Graph {
  std::vector<std::unique_ptr<GraphNode>> nodes;  // insertion order is a topological order
};

struct GraphExec {
  std::vector<std::int64_t> durations_ns;
};

// Owns objects handed out as opaque handles; a handle is valid while
// registered, so stale or foreign handles are detected, not dereferenced.
template <typename T>
class Registry {
 public:
  T* add(std::unique_ptr<T> object) {
    T* raw = object.get();
    objects_.emplace(raw, std::move(object));
    return raw;
  }
  T* find(const void* handle) const {
    const auto it = objects_.find(handle);
    return it == objects_.end() ? nullptr : it->second.get();
  }
  bool erase(const void* handle) { return objects_.erase(handle) > 0; }
  template <typename Predicate>
  void erase_if(Predicate predicate) {
    std::erase_if(objects_, [&](const auto& entry) { return predicate(*entry.second); });
  }
  void clear() { objects_.clear(); }

 private:
  std::unordered_map<const void*, std::unique_ptr<T>> objects_;
};

class Driver {
 public:
  std::mutex mutex;

  // --- configuration (valid while initialised) ---
  bool initialised = false;
  EnvSnapshot environment;
  std::vector<DeviceSpec> fleet;
  std::vector<std::size_t> visible;  // CUDA ordinal -> physical device
  std::uint64_t context_footprint_bytes = 0;
  std::uint64_t module_footprint_bytes = 0;  // GPUSLICE_FAKE_MODULE_MIB: code and globals of a loaded module
  std::unique_ptr<SharedState> state;
  // Bumped whenever the process-local objects are dropped (fork child,
  // reconfiguration), which invalidates every thread's context stack.
  std::uint64_t epoch = 1;

  // --- objects behind handles ---
  Registry<Context> contexts;
  std::array<Context*, kMaxDevices> primary{};        // by ordinal; kept while released
  std::array<unsigned, kMaxDevices> live_contexts{};  // by physical device
  std::map<CUdeviceptr, Allocation> allocations;      // by base address
  std::unordered_map<CUmemGenericAllocationHandle, Allocation> handles;
  // Virtual memory: reserved ranges (base -> size), mappings (base ->
  // handle), and per handle its live mappings and whether it was released
  // (its memory stays until the last mapping goes, as on the real driver).
  std::map<CUdeviceptr, std::uint64_t> reserved_ranges;
  std::map<CUdeviceptr, CUmemGenericAllocationHandle> mappings;
  std::unordered_map<CUmemGenericAllocationHandle, unsigned> mapped_count;
  std::unordered_map<CUmemGenericAllocationHandle, bool> released_handles;
  // Page-locked host memory (cuMemAllocHost/cuMemHostAlloc) and registered
  // host ranges: host memory, never charged to a card.
  std::unordered_map<void*, std::uint64_t> host_allocations;
  std::unordered_map<void*, std::uint64_t> host_registrations;
  Registry<Array> mipmapped_arrays;
  std::uint32_t next_legacy_address = 0x10000000;  // 32-bit-era cuMemAlloc addresses
  Registry<Array> arrays;
  Registry<Stream> streams;
  Registry<Event> events;
  Registry<Function> functions;
  Registry<Module> modules;
  Registry<Module> libraries;
  Registry<Pool> pools;
  std::array<Pool*, kMaxDevices> default_pools{};  // by ordinal
  Registry<Graph> graphs;
  Registry<GraphExec> graph_execs;
  // End of this process's last kernel per physical device.
  std::array<std::int64_t, kMaxDevices> last_end_ns{};

  // cuInit: (re)loads the configuration when the environment changed.
  CUresult initialise();

  // Drops every process-local object; with `release_shared` also this
  // process's record in the shared state (memory, contexts).
  void drop_process_objects(bool release_shared);

  // --- lookups, each returning the CUDA error a real driver would ---
  CUresult require_initialised() const;
  CUresult device(CUdevice ordinal, std::size_t& physical) const;
  CUresult current_context(Context*& context);
  CUresult stream_context(CUstream stream, Context*& context, Stream*& object);
  bool context_live(const Context* context) const;

  // --- contexts ---
  // Counts a new context on `context->device`, charging the footprint
  // when it is the process's first there (may fail: out of memory).
  CUresult attach_context(std::size_t device);
  // Frees what the context owns (allocations, arrays, streams, modules)
  // and uncounts it; the caller removes or deactivates the object.
  void detach_context(Context* context);

  // --- memory ---
  CUresult allocate(Context* context, std::size_t device, std::uint64_t bytes, CUdeviceptr* out);
  CUresult charge(std::size_t device, std::uint64_t bytes, std::uint64_t& address);
  void uncharge(std::size_t device, std::uint64_t bytes);
  // Whether [address, address + bytes) lies in one live allocation.
  bool covers(CUdeviceptr address, std::size_t bytes) const;

  // --- kernels ---
  CUresult run(Context* context, Stream* stream, std::span<const std::int64_t> durations_ns);
  // When the work synchronize must wait for ends (stream nullptr: all of
  // this process's work on the context's device).
  std::int64_t work_end(const Context* context, const Stream* stream) const;
};

Driver& driver();

// What the fake takes for a request, like the real driver: whole 2 MiB
// pages (kGranularity, also what cuMemGetAllocationGranularity reports)
// for a request of at least that, 512-byte steps below it. 0 when the
// rounded size does not fit in 64 bits (the caller refuses it).
inline constexpr std::uint64_t kGranularity = 2ULL << 20;
inline constexpr std::uint64_t kSmallAlignment = 512;
std::uint64_t driver_rounded(std::uint64_t bytes);

// The calling thread's context stack (cleared when the driver's epoch moved).
std::vector<Context*>& context_stack(const Driver& d);

// Kernel length in ns from the function and its parameters, or
// CUDA_ERROR_INVALID_VALUE when a `spin` launch has no parameter.
CUresult kernel_duration(const Function& function, void** params, void** extra, std::int64_t& duration_ns);

}  // namespace gpuslice::fake
