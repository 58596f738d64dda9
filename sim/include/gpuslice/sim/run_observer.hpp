// What happens in a run, told to whoever measures it. The simulator moves
// pods through the cluster; Metrics and the card-use log observe, so a new
// measure is a new observer rather than more state in the simulator.
#pragma once

#include <cstddef>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/sim/workload.hpp"

namespace gpuslice::sim {

// A placement or a departure, told after the cluster was charged or released.
struct PodMove {
  double time = 0;
  const core::Cluster& cluster;
  size_t node = 0;
  const PodSpec& pod;
  const core::PodAllocation& allocation;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void arrived(double /*time*/, const PodSpec& /*pod*/) {}
  virtual void placed(const PodMove& /*move*/) {}
  virtual void departed(const PodMove& /*move*/) {}
};

}  // namespace gpuslice::sim
