// Alibaba's openb trace (cluster-trace-gpu-v2023) and the FGD study's
// workload model. openb gives one scalar per GPU (gpu_milli); HAMi requests
// two. Our mapping (docs/simulator.md): a share of s milli on one card asks
// gpucores = s/10 (rounded down, at least 1) and the same percentage of the
// card's memory (gpumem-percentage = gpucores) so one request fits every
// allowed model and both dimensions bind alike; a whole-card pod asks
// N cards with 100% memory and 100 cores. CPU and host memory are real.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/sim/diurnal.hpp"
#include "gpuslice/sim/workload.hpp"

namespace gpuslice::sim {

// MiB of one card of an openb model. G1/G2/G3 are undisclosed; we take
// 16/32/32 GiB (documented in docs/simulator.md).
int64_t openb_card_memory_mib(std::string_view model);

struct OpenbOptions {
  double tune = 1.3;  // resample until demand reaches tune x fleet GPUs
  uint64_t seed = 42;
  bool resample = true;     // false: replay every row once, in creation order
  bool departures = false;  // use creation/deletion times
  int32_t slots = 1000;     // a card takes many shares; milli is the binding dimension
  // A priority per qos column value (LS, Burstable, Guaranteed, BE):
  // openb_pods.priority_class_by_qos; a qos not named takes `other`.
  std::map<std::string, PodPriority> priority_by_qos;
  PodPriority other;
  // openb_pods.diurnal: the trace's shapes arriving at a diurnal rate (diurnal.hpp).
  std::optional<OpenbDiurnal> diurnal;
};

// The trace's pods (shaped, every row once) as a diurnal stream.
Workload openb_diurnal(const Workload& shapes, const OpenbDiurnal& spec, uint64_t seed);

// The most pods one run may hold (a resampled replay stops there too).
inline constexpr size_t kMaxPods = 50'000'000;
// tune's range: the study sweeps up to 1.3; past 10x the fleet's GPUs the
// extra demand is only refused, and the stream grows without purpose.
inline constexpr double kMaxTune = 10;
// Why a tune value is unusable ("" when it is fine): NaN, <= 0 or > kMaxTune.
std::string tune_problem(double tune);
// Throws InputError (field num_gpu) when no pod of a trace asks for a GPU:
// the study's resampling could never reach tune x capacity with them.
void require_gpu_demand(const Workload& trace, const std::string& source);

// Nodes from openb_node_list_*.csv text (CPU-only nodes included if present).
core::Cluster load_openb_nodes(std::string_view csv, const std::string& source, int32_t slots = 1000);
// The study's workload from the trace's pods (the artifact's SortClusterPods
// and TunePodsByNodeTotalResource, pkg/simulator/{core,simulator}.go): every
// trace pod once, in an order shuffled by the seed, then draws with
// replacement appended while the next draw keeps GPU demand within
// tune x the fleet's GPUs (or, when the trace alone asks for more, pods
// removed at random until it fits). Submitted one per time unit, never
// departing. Throws InputError when no pod asks for a GPU.
Workload study_workload(Workload trace, const core::Cluster& fleet, const OpenbOptions& options,
                        const std::string& source);

// The study's node order for a seed: the artifact prefixes node names with
// one random permutation per seed ("%04d-", pkg/simulator/simulator.go) and
// its scheduler gives equal scores to the name that sorts first, so ties go
// to a random but fixed node. Here the fleet is listed in that order (ties
// go to the node listed first); names are kept.
core::Cluster study_node_order(const core::Cluster& fleet, uint64_t seed);

// The trace's rows as pods, in file order, before any ordering or
// resampling (options: departures only). Throws InputError naming the line.
Workload parse_openb_pods(std::string_view csv, const std::string& source, const OpenbOptions& options);
// Pods from openb_pod_list_*.csv text, shaped by the study's model.
Workload load_openb_pods(std::string_view csv, const std::string& source, const core::Cluster& fleet,
                         const OpenbOptions& options);

}  // namespace gpuslice::sim
