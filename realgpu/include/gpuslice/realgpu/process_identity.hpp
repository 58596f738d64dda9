// Who owns a record in the shared state, in a way that survives pid reuse:
// the pid plus the process start time (field 22 of /proc/<pid>/stat). A
// record whose process is gone, a zombie, or a different process with the
// same pid, belongs to a dead process and is reclaimed.
//
// Shared by the shim's slice accounting and the fake driver's state. All
// processes sharing one file must share a pid namespace. Without /proc (start
// time unknown, recorded as 0) a record is alive while its pid exists.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace gpuslice::realgpu {

struct ProcessId {
  std::int32_t pid = 0;
  std::uint64_t start_time = 0;  // clock ticks since boot
  bool operator==(const ProcessId&) const = default;
};

// The calling process; recomputed after fork (the pid changes).
ProcessId self_process();

// Start time of a running (non-zombie) process, nullopt if it has exited.
std::optional<std::uint64_t> running_start_time(pid_t pid);

bool is_alive(const ProcessId& process);

}  // namespace gpuslice::realgpu
