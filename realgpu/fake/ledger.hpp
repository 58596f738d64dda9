// Who holds what on each fake card: per-process records of allocated bytes
// and context footprints in the shared state. Every function here runs with
// the state mutex held (it takes the locked layout).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuslice/realgpu/process_identity.hpp"
#include "shared_state.hpp"

namespace gpuslice::fake::ledger {

using realgpu::ProcessId;

enum class Kind { allocation, context };

enum class Charge { ok, out_of_memory, no_process_slot };

// Drops the records of processes that have exited (or whose pid now names
// another process), returning their memory and contexts to the cards.
void reap_dead(StateLayout& state);

// The caller's record, created on first use; nullptr when the table is full
// even after reaping.
ProcessRecord* record_for(StateLayout& state, const ProcessId& process);

// Card-wide bytes held by all live records (allocations + context footprints).
std::uint64_t used_bytes(const StateLayout& state, std::size_t device);

// Adds `bytes` to the process's record if the card has room; when it has
// not, reaps dead processes once and tries again before refusing.
Charge charge(StateLayout& state, const ProcessId& process, std::size_t device, std::uint64_t bytes,
              Kind kind);

void release(StateLayout& state, const ProcessId& process, std::size_t device, std::uint64_t bytes,
             Kind kind);

// Context bookkeeping: a process "holds a context" on a device while its
// count is above zero (it shows in the running-process list).
void add_context(StateLayout& state, const ProcessId& process, std::size_t device);
void remove_context(StateLayout& state, const ProcessId& process, std::size_t device);

// Clears the process's record (used when a process reconfigures the fake).
void forget(StateLayout& state, const ProcessId& process);

struct ProcessUse {
  std::int32_t pid;     // as NVML reports it (the host's numbering)
  std::uint64_t bytes;  // allocations + context footprint
};

// Live processes holding memory or a context on the device (reaps first).
std::vector<ProcessUse> running_processes(StateLayout& state, std::size_t device);

// A unique fake address range (or handle) of at least `bytes`.
std::uint64_t reserve_address(StateLayout& state, std::uint64_t bytes);

}  // namespace gpuslice::fake::ledger
