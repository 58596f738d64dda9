// How much memory a simulation run will hold, estimated from the scenario
// before anything is generated, so that a run too big for the machine (or
// for a limit set on the process) is refused up front with the figure
// (docs/simulator.md#memory). The constants are measured, not guessed
// (sim/src/memory_estimate.cpp says how).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {

struct RunSize {
  size_t pods = 0;   // pods the run creates (generated, listed, resampled, a snapshot's)
  size_t nodes = 0;  // nodes it may hold at once (fleet, node groups at their max)
};

// The pods and nodes of one run of `scenario` (openb: the trace's rows
// times max(1, tune), its resampling's usual size).
RunSize run_size(const Scenario& scenario);

// Peak bytes one run of that size holds: its pod stream, per-pod records,
// events and timeline, the per-card use log when kept, and the fleet.
uint64_t run_memory_bytes(const RunSize& size, bool card_use);

// Refuses (cli::MemoryLimitError, exit 2) a run of this size that would not
// fit in the memory left; `runs_at_once` runs held together (the study's
// parallel runs) count that many times.
void guard_run_memory(const RunSize& size, bool card_use, size_t runs_at_once = 1);

// Refuses reading a cluster dump of `path` (kubectl get -o yaml|json) whose
// reading would not fit: the reader holds the text and what it decodes.
void guard_read_memory(const std::string& path);

}  // namespace gpuslice::sim
