// Synthetic pod streams: an arrival process, a duration distribution and a
// weighted mix of pod templates. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuslice/core/request.hpp"
#include "gpuslice/sim/diurnal.hpp"
#include "gpuslice/sim/workload.hpp"

namespace gpuslice::sim {

struct PodTemplate {
  std::string name;
  double weight = 1;
  core::PodRequest request;    // the pod's shape (name is replaced per pod)
  PodPriority priority;        // priority / priority_class / preemption_policy
  bool controlled = true;      // controller: false makes bare pods
  bool pdb_protected = false;  // pdb_protected: a PodDisruptionBudget allows no eviction
};

struct GeneratorSpec {
  size_t pods = 0;
  std::string arrival = "poisson";       // poisson | uniform (fixed gaps) | burst (all at 0)
  double rate_per_s = 1;                 // mean arrivals per second
  std::string duration = "exponential";  // exponential | fixed | lognormal | forever
  double mean_s = 600;
  double sigma = 1;  // lognormal shape
  // poisson only: a rate that follows the day (diurnal.hpp); 0 keeps it flat.
  double diurnal_amplitude = 0;
  double diurnal_peak = 14 * 3600;  // seconds after midnight
  std::vector<PodTemplate> mix;
};

// typical_mib: the fleet's typical card memory, to express MiB requests as GPU shares.
Workload generate(const GeneratorSpec& spec, uint64_t seed, int64_t typical_mib);

}  // namespace gpuslice::sim
