#include "ledger.hpp"

#include <cstring>

#include "environment.hpp"

namespace gpuslice::fake::ledger {

namespace {

ProcessRecord* find(StateLayout& state, const ProcessId& process) {
  for (ProcessRecord& record : state.processes)
    if (record.pid == process.pid && record.start_time == process.start_time) return &record;
  return nullptr;
}

void clear(ProcessRecord& record) { std::memset(static_cast<void*>(&record), 0, sizeof record); }

}  // namespace

void reap_dead(StateLayout& state) {
  for (ProcessRecord& record : state.processes)
    if (record.pid != 0 && !is_alive(ProcessId{record.pid, record.start_time})) clear(record);
}

ProcessRecord* record_for(StateLayout& state, const ProcessId& process) {
  if (ProcessRecord* existing = find(state, process)) return existing;
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (ProcessRecord& record : state.processes) {
      if (record.pid == 0) {
        clear(record);
        record.start_time = process.start_time;
        record.nvml_pid = nvml_pid(process.pid);  // records are made by their own process
        record.pid = process.pid;
        return &record;
      }
    }
    reap_dead(state);
  }
  return nullptr;
}

std::uint64_t used_bytes(const StateLayout& state, std::size_t device) {
  std::uint64_t used = 0;
  for (const ProcessRecord& record : state.processes)
    if (record.pid != 0) used += record.allocated_bytes[device] + record.context_bytes[device];
  return used;
}

Charge charge(StateLayout& state, const ProcessId& process, std::size_t device, std::uint64_t bytes,
              Kind kind) {
  const std::uint64_t total = state.devices[device].total_bytes;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::uint64_t used = used_bytes(state, device);
    if (used <= total && bytes <= total - used) {
      ProcessRecord* record = record_for(state, process);
      if (record == nullptr) return Charge::no_process_slot;
      (kind == Kind::allocation ? record->allocated_bytes : record->context_bytes)[device] += bytes;
      return Charge::ok;
    }
    // Memory of processes that died since the last query comes back first.
    if (attempt == 0) reap_dead(state);
  }
  return Charge::out_of_memory;
}

void release(StateLayout& state, const ProcessId& process, std::size_t device, std::uint64_t bytes,
             Kind kind) {
  ProcessRecord* record = find(state, process);
  if (record == nullptr) return;
  std::uint64_t& held = (kind == Kind::allocation ? record->allocated_bytes : record->context_bytes)[device];
  held = bytes > held ? 0 : held - bytes;
}

void add_context(StateLayout& state, const ProcessId& process, std::size_t device) {
  if (ProcessRecord* record = record_for(state, process)) ++record->context_count[device];
}

void remove_context(StateLayout& state, const ProcessId& process, std::size_t device) {
  ProcessRecord* record = find(state, process);
  if (record != nullptr && record->context_count[device] > 0) --record->context_count[device];
}

void forget(StateLayout& state, const ProcessId& process) {
  if (ProcessRecord* record = find(state, process)) clear(*record);
}

std::vector<ProcessUse> running_processes(StateLayout& state, std::size_t device) {
  reap_dead(state);
  std::vector<ProcessUse> result;
  for (const ProcessRecord& record : state.processes) {
    if (record.pid == 0) continue;
    const std::uint64_t bytes = record.allocated_bytes[device] + record.context_bytes[device];
    if (bytes > 0 || record.context_count[device] > 0)
      result.push_back({record.nvml_pid != 0 ? record.nvml_pid : record.pid, bytes});
  }
  return result;
}

std::uint64_t reserve_address(StateLayout& state, std::uint64_t bytes) {
  // 64 KiB granules plus a one-granule gap: every pointer is well aligned
  // and an off-by-one past an allocation never lands in the next one.
  constexpr std::uint64_t kGranule = 64 * 1024;
  const std::uint64_t address = state.next_address;
  state.next_address += (bytes + kGranule - 1) / kGranule * kGranule + kGranule;
  return address;
}

}  // namespace gpuslice::fake::ledger
